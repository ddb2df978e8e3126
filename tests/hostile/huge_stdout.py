import sys


def main():
    line = "x" * 1000
    for _ in range(50_000):
        print(line)
        sys.stderr.write(line)
    return "done"
