def main():
    chunk = b"z" * (1 << 20)
    with open("big.bin", "wb") as fh:
        for _ in range(1024):
            fh.write(chunk)
    return "wrote 1 GiB"
