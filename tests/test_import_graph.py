"""The solver's modules import each other without cycles (imports inside functions included): every
module can be understood, tested and replaced from its dependencies up."""
import grimp


def cycles(graph):
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on, stack, found, counter = {}, {}, set(), [], [], [0]
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in graph.modules:
                    continue
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.find_modules_directly_imported_by(w)))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    component.append(x)
                    if x == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_solver_modules_import_each_other_without_cycles():
    assert cycles(grimp.build_graph("solver")) == []


def test_a_cycle_is_found():
    class Graph:                      # a → b → c → a, d alone
        modules = {"a", "b", "c", "d"}
        edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}

        def find_modules_directly_imported_by(self, m):
            return self.edges[m]

    assert cycles(Graph()) == [["a", "b", "c"]]
