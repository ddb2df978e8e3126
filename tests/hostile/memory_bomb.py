def main():
    hoard = []
    while True:
        hoard.append(bytearray(32 * 1024 * 1024))


def one_shot():
    return len(bytearray(10**12))


def many_processes():
    # Each process stays under the per-process address-space limit; together they do not.
    import os
    import time

    for _ in range(6):
        if os.fork() == 0:
            hoard = b"m" * (150 * 1024 * 1024)
            time.sleep(30)
            os._exit(len(hoard))
    time.sleep(30)
