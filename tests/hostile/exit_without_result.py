import os


def main():
    os._exit(0)


def sys_exit():
    raise SystemExit(3)


def close_channel():
    for fd in range(3, 64):
        try:
            os.close(fd)
        except OSError:
            pass
    return 1


def garbage_channel():
    os.write(3, b"not a frame at all")
    return 1


def forged_frame():
    # A well-formed header announcing far more than the parent accepts.
    os.write(3, b"SBX1" + (2**31).to_bytes(4, "big"))
    return 1


def fork_and_return():
    # Both processes return; only the original may report.
    os.fork()
    return "once"


def flood_channel():
    # Far more bytes on the result pipe than the parent accepts.
    os.write(3, b"SBX1" + (100).to_bytes(4, "big") + b"x" * (4 * 1024 * 1024))
    return 1


def patch_os():
    # Sabotage the functions a naive harness would use to report and exit.
    os._exit = lambda code: None
    os.write = lambda fd, data: len(data)
    return "patched"


def deep_json_frame():
    # A well-formed frame whose JSON nests far too deeply for a recursive parser.
    body = b"[" * 100_000 + b"]" * 100_000
    os.write(3, b"SBX1" + len(body).to_bytes(4, "big") + body)
    os._exit(0)
