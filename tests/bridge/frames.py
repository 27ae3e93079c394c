#!/usr/bin/env python3
"""Frames for the wire-bridge tests, Python standard library only.

  frames.py make OUT.pcap N [DST_MAC]   N IPv4/UDP frames (port 9, sequence number in the
                                        payload, sizes 60..1514 bytes) as a pcap file
  frames.py check SENT.pcap BACK.pcap   BACK holds every frame of SENT, in order, with the
                                        MAC addresses swapped and nothing else changed
"""
import struct
import sys

DUT_MAC = "00:04:9f:07:9f:01"
HOST_MAC = bytes.fromhex("020000000001")


def checksum(header):
    s = sum(struct.unpack("!%dH" % (len(header) // 2), header))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def frame(seq, dst_mac):
    size = 60 + (seq * 97) % (1514 - 60 + 1)  # every size class, deterministic
    payload = struct.pack("!I", seq) + bytes((seq + i) & 0xFF for i in range(size - 14 - 20 - 8 - 4))
    udp = struct.pack("!HHHH", 9, 9, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), seq & 0xFFFF, 0, 64, 17, 0,
                     bytes([198, 18, 0, 1]), bytes([198, 18, 0, 42]))
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    return dst_mac + HOST_MAC + b"\x08\x00" + ip + udp


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", i // 1000, (i % 1000) * 1000, len(fr), len(fr)))
            f.write(fr)


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    out, off = [], 24
    while off + 16 <= len(data):
        _, _, caplen, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        out.append(data[off + 16:off + 16 + caplen])
        off += 16 + caplen
    return out


def main(argv):
    if len(argv) >= 3 and argv[1] == "make":
        dst = bytes.fromhex((argv[4] if len(argv) > 4 else DUT_MAC).replace(":", ""))
        write_pcap(argv[2], [frame(i, dst) for i in range(int(argv[3]))])
        return 0
    if len(argv) == 4 and argv[1] == "check":
        sent, back = read_pcap(argv[2]), read_pcap(argv[3])
        expected = [f[6:12] + f[0:6] + f[12:] for f in sent]
        for i, (e, b) in enumerate(zip(expected, back)):
            if e != b:
                print("frame %d differs: sent %d bytes, got %d back" % (i, len(e), len(b)))
                return 1
        if len(back) != len(sent):
            print("sent %d frames, %d came back" % (len(sent), len(back)))
            return 1
        print("all %d frames came back in order with the MACs swapped" % len(sent))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
