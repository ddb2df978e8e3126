import os


def main():
    found = {"environ": dict(os.environ)}
    for path in ("/proc/1/environ", "/proc/self/environ", "/proc/1/cmdline"):
        try:
            with open(path, "rb") as fh:
                found[path] = fh.read().decode("latin-1")
        except OSError as exc:
            found[path] = type(exc).__name__
    try:
        found["root_listing"] = os.listdir("/root")
    except OSError as exc:
        found["root_listing"] = type(exc).__name__
    found["uid"] = os.getuid()
    found["groups"] = os.getgroups()
    return found
