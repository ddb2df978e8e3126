import os
import time


def main():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            # The grandchild: new session, new process group, orphaned. Sleeps forever.
            os.setsid()
            while True:
                time.sleep(1000)
        os._exit(0)
    os.wait()
    return "parent done"
