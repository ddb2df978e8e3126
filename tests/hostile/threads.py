import threading
import time


def main(n):
    results = []
    lock = threading.Lock()

    def work(i):
        total = sum(range(i * 1000))
        with lock:
            results.append(total)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(results)


def flood():
    # Far more threads than the process limit allows.
    threads = []
    for _ in range(500):
        t = threading.Thread(target=time.sleep, args=(5,), daemon=True)
        t.start()
        threads.append(t)
    return len(threads)


def leave_running():
    # Non-daemon thread still busy when the function returns.
    threading.Thread(target=lambda: time.sleep(100)).start()
    return "returned"
