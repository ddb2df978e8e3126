import signal


def main():
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGXCPU, signal.SIGUSR1):
        signal.signal(sig, signal.SIG_IGN)
    # An alarm handler that re-arms itself forever.
    signal.signal(signal.SIGALRM, lambda *_: signal.setitimer(signal.ITIMER_REAL, 0.01))
    signal.setitimer(signal.ITIMER_REAL, 0.01)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGCHLD})
    x = 0
    while True:
        x += 1
