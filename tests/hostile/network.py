import socket


def main(port):
    outcomes = {}
    for name, addr in (
        ("loopback", ("127.0.0.1", port)),
        ("external", ("1.1.1.1", 53)),
        ("dns_name", ("example.com", 80)),
    ):
        try:
            socket.create_connection(addr, timeout=0.5).close()
            outcomes[name] = "connected"
        except OSError as exc:
            outcomes[name] = type(exc).__name__
    try:
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.sendto(b"ping", ("127.0.0.1", port))
        outcomes["udp"] = "sent"
    except OSError as exc:
        outcomes["udp"] = type(exc).__name__
    return outcomes
