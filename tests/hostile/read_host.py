import os


def _outcome(path):
    try:
        if os.path.isdir(path):
            return ["dir", sorted(os.listdir(path))]
        with open(path, "rb") as fh:
            return ["file", fh.read(200).decode("latin-1")]
    except OSError as exc:
        return [type(exc).__name__]


def main(paths):
    """Try to read (or list) each path; report what each attempt got."""
    return {path: _outcome(path) for path in paths}


def listing(path):
    try:
        return sorted(os.listdir(path))
    except OSError as exc:
        return type(exc).__name__


def search(names, skip):
    """Walk the whole filesystem this process sees, outside ``skip``, for files called ``names``."""
    hits = []
    for top, dirs, files in os.walk("/"):
        dirs[:] = [d for d in dirs if os.path.join(top, d) not in skip]
        hits += [os.path.join(top, f) for f in files + dirs if f in names]
    return hits
