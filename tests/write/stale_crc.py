"""Hadoop's local file system (ChecksumFileSystem) keeps `.NAME.crc` next to each file Spark
writes and refuses to read a file whose bytes no longer match it ("ChecksumException").
Prints the files under TABLE whose .crc does not match (stale: the file was rewritten by
someone else), one path a line; with --fix removes those .crc files.

    python stale_crc.py TABLE [--fix]
"""
import os
import struct
import sys
import zlib


def stale(path):
    out = []
    for root, _, files in os.walk(path):
        for f in files:
            if not (f.startswith(".") and f.endswith(".crc")):
                continue
            data_file = os.path.join(root, f[1:-4])
            if not os.path.exists(data_file):
                continue
            raw = open(os.path.join(root, f), "rb").read()
            if raw[:4] != b"crc\0":
                continue
            per = struct.unpack(">i", raw[4:8])[0]
            sums = [struct.unpack(">I", raw[i:i + 4])[0] for i in range(8, len(raw), 4)]
            data = open(data_file, "rb").read()
            chunks = [data[i:i + per] for i in range(0, len(data), per)]
            if len(chunks) != len(sums) or any((zlib.crc32(c) & 0xFFFFFFFF) != s for c, s in zip(chunks, sums)):
                out.append(os.path.relpath(data_file, path))
                if "--fix" in sys.argv:
                    os.remove(os.path.join(root, f))
    return sorted(out)


if __name__ == "__main__":
    for p in stale(sys.argv[1]):
        print(p)
