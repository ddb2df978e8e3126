import sys


def _through_c(n):
    # Every level passes through a C builtin, so the C stack overflows.
    return max([n], key=lambda x: _through_c(x + 1))


def c_stack():
    sys.setrecursionlimit(10**6)
    return _through_c(0)


def _pure(n):
    return _pure(n + 1) + 1


def pure_python():
    sys.setrecursionlimit(10**6)
    return _pure(0)
