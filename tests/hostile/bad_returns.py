def pickle_bomb():
    # 2**40 paths through 40 shared nodes: tiny in memory, astronomical when expanded.
    node = []
    for _ in range(40):
        node = [node, node]
    return node


def gigantic_nested():
    value = []
    for _ in range(100_000):
        value = [value]
    return value


def self_reference():
    value = [1, 2]
    value.append(value)
    return value


class LoopingRepr:
    def __repr__(self):
        while True:
            pass


def repr_loops():
    return LoopingRepr()


class RaisingRepr:
    def __repr__(self):
        raise RuntimeError("no repr for you")


def repr_raises():
    return RaisingRepr()


def huge_string():
    return "y" * (50 * 1024 * 1024)


class Liar(int):
    def __iter__(self):
        raise RuntimeError("never asked")

    def __repr__(self):
        return "999"


def lying_subclass():
    return Liar(7)
