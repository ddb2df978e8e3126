import os


def main(paths):
    """Try to create each path; report which attempts succeeded."""
    landed = []
    for path in paths:
        try:
            with open(path, "w") as fh:
                fh.write("pwned")
            landed.append(path)
        except OSError:
            pass
    with open("inside.txt", "w") as fh:  # the private work directory is writable
        fh.write("fine")
    return {"landed": landed, "cwd_ok": os.path.exists("inside.txt")}
