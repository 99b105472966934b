#!/usr/bin/env python3
"""Writes a classic pcap (Ethernet) of generated RoCEv2 traffic, for the tests
and the benchmark of `rxerun decode`.

usage: roce_pcap.py OUT.pcap [--packets N] [--seed S] [--mtu BYTES]
                    [--ipv6 FRACTION] [--other FRACTION]
                    [--bad-icrc FRAME,...] [--truncate FRAME,...]
                    [--nanoseconds] [--truth TRUTH.jsonl]
                    [--fuzz-corpus DIR]

The traffic is what two rxe ends exchange, as conversations: RC RDMA WRITE
(ONLY, or FIRST/MIDDLE.../LAST cut at the path MTU, RETH on the first),
SEND ONLY (some with pad bytes), RDMA READ REQUEST and its RESPONSE
FIRST/MIDDLE/LAST or ONLY, each request answered by an ACKNOWLEDGE (AETH),
a few of them NAKs (PSN sequence error, then the requester retransmits) and
RNR NAKs; UD SEND ONLY with a DETH to QP 1 (what rdma_cm's messages look
like). With --ipv6 a share of the conversations is over IPv6; with --other a
share of the frames is other traffic (ARP, DNS over UDP 53, TCP).

Every ICRC is computed here, independently of rxerun (CRC-32 over the masked
IP/UDP/BTH fields, as IBA annex A17 and drivers/infiniband/sw/rxe/rxe_icrc.c
define it, stored little-endian). --bad-icrc flips the stored ICRC of the
given frames (1-based frame numbers); --truncate cuts the given frames' captured
bytes to 50 (caplen < len: the decoder must say "truncated ...").

--truth writes what was generated, one JSON object per frame, in the keys of
`rxerun decode --json` for RoCEv2 packets ({"frame", "time", "src", "dst",
"opcode", "opcode_name", "dest_qp", "psn", "ack_req", "reth", "aeth",
"icrc_ok"}), {"frame": N, "other": "ARP"} for other traffic and
{"frame": N, "malformed": true} for truncated frames.

--fuzz-corpus also writes each frame as a seed of tests/fuzz/decode_fuzz.cpp
(a first byte choosing the link type, then the frame): as Ethernet (0),
every third one as raw IP (1), every fifth as Linux cooked v1 (3) and v2 (4). Python standard library only (struct, zlib).
"""

import argparse
import json
import random
import struct
import sys
import zlib

OPCODES = {
    0x04: "RC_SEND_ONLY",
    0x06: "RC_RDMA_WRITE_FIRST",
    0x07: "RC_RDMA_WRITE_MIDDLE",
    0x08: "RC_RDMA_WRITE_LAST",
    0x0A: "RC_RDMA_WRITE_ONLY",
    0x0C: "RC_RDMA_READ_REQUEST",
    0x0D: "RC_RDMA_READ_RESPONSE_FIRST",
    0x0E: "RC_RDMA_READ_RESPONSE_MIDDLE",
    0x0F: "RC_RDMA_READ_RESPONSE_LAST",
    0x10: "RC_RDMA_READ_RESPONSE_ONLY",
    0x11: "RC_ACKNOWLEDGE",
    0x64: "UD_SEND_ONLY",
}
RETH_OPS = {0x06, 0x0A, 0x0C}
AETH_OPS = {0x0D, 0x0F, 0x10, 0x11}
DETH_OPS = {0x64}

ETH_IPV4 = 0x0800
ETH_IPV6 = 0x86DD
ETH_ARP = 0x0806
ROCE_PORT = 4791
FF8 = b"\xff" * 8
PAYLOAD = bytes(range(256)) * 40  # sliced for every payload


def ipv4_checksum(header):
    s = sum(struct.unpack("!10H", header))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


class Host:
    """One end: MAC, IP address (v4 or v6), the UDP source port rxe picked."""

    def __init__(self, mac, ip, v6, sport):
        self.mac = bytes.fromhex(mac.replace(":", ""))
        self.ip_text = ip
        self.v6 = v6
        if v6:
            import ipaddress
            self.ip = ipaddress.IPv6Address(ip).packed
        else:
            self.ip = bytes(int(x) for x in ip.split("."))
        self.sport = sport


class Writer:
    def __init__(self, out, args):
        self.out = out
        self.args = args
        self.frame = 0
        self.ns = 1764806400 * 1_000_000_000 + 123_456_000  # 2025-12-04 00:00:00.123456
        self.rng = random.Random(args.seed)
        self.bad = set(args.bad_icrc)
        self.truncate = set(args.truncate)
        self.truth = open(args.truth, "w") if args.truth else None
        self.ip_id = 0
        self.chunks = []
        magic = 0xA1B23C4D if args.nanoseconds else 0xA1B2C3D4
        out.write(struct.pack("<IHHiIII", magic, 2, 4, 0, 0, 262144, 1))

    def done(self):
        return self.frame >= self.args.packets

    def _record(self, frame_bytes):
        self.frame += 1
        self.ns += self.rng.randrange(1000, 20000)
        sec, sub = divmod(self.ns, 1_000_000_000)
        if not self.args.nanoseconds:
            sub //= 1000
            self.ns = sec * 1_000_000_000 + sub * 1000
        wire = len(frame_bytes)
        cap = frame_bytes
        if self.frame in self.truncate:
            cap = frame_bytes[:50]
        self.chunks.append(struct.pack("<IIII", sec, sub, len(cap), wire))
        self.chunks.append(cap)
        if self.args.fuzz_corpus:
            with open(f"{self.args.fuzz_corpus}/frame-{self.frame:03d}-eth", "wb") as f:
                f.write(b"\x00" + cap)
            if self.frame % 3 == 0:
                with open(f"{self.args.fuzz_corpus}/frame-{self.frame:03d}-raw", "wb") as f:
                    f.write(b"\x01" + cap[14:])
            if self.frame % 5 == 0 and len(cap) >= 14:
                # Linux cooked v1 (3) and v2 (4): the source MAC, the ethertype.
                ethertype = cap[12:14]
                with open(f"{self.args.fuzz_corpus}/frame-{self.frame:03d}-sll", "wb") as f:
                    f.write(b"\x03" + struct.pack("!HHH", 0, 1, 6) + cap[6:12] + b"\0\0" + ethertype + cap[14:])
                with open(f"{self.args.fuzz_corpus}/frame-{self.frame:03d}-sll2", "wb") as f:
                    f.write(b"\x04" + ethertype + b"\0\0" + struct.pack("!IHBB", 2, 1, 0, 6) + cap[6:12] + b"\0\0" +
                            cap[14:])
        if len(self.chunks) > 4096:
            self.flush()

    def flush(self):
        self.out.write(b"".join(self.chunks))
        self.chunks = []

    def time_text(self):
        sec, sub = divmod(self.ns, 1_000_000_000)
        return float(f"{sec}.{sub:09d}")

    def roce(self, src, dst, opcode, dest_qp, psn, ack_req=False, reth=None, aeth=None, deth=None, payload=0,
             solicited=False):
        """One RoCEv2 packet from src to dst; returns nothing, writes it."""
        if self.done():
            return
        pad = (-payload) & 3
        bth = struct.pack("!BBHBBHBBH", opcode, (0x80 if solicited else 0) | (pad << 4), 0xFFFF, 0,
                          dest_qp >> 16, dest_qp & 0xFFFF, 0x80 if ack_req else 0, psn >> 16, psn & 0xFFFF)
        ext = b""
        if deth is not None:
            ext += struct.pack("!II", deth[0], deth[1] & 0xFFFFFF)
        if reth is not None:
            ext += struct.pack("!QII", reth[0], reth[1], reth[2])
        if aeth is not None:
            ext += struct.pack("!I", (aeth[0] << 24) | (aeth[1] & 0xFFFFFF))
        body = ext + PAYLOAD[:payload] + b"\0" * pad
        udp_len = 8 + len(bth) + len(body) + 4
        udp = struct.pack("!HHHH", src.sport, ROCE_PORT, udp_len, 0)
        udp_masked = udp[:6] + b"\xff\xff"
        bth_masked = bth[:4] + b"\xff" + bth[5:]
        if src.v6:
            ip = struct.pack("!IHBB", 0x60000000, udp_len, 17, 64) + src.ip + dst.ip
            ip_masked = b"\x6f\xff\xff\xff" + ip[4:7] + b"\xff" + ip[8:]
            ethertype = ETH_IPV6
        else:
            self.ip_id = (self.ip_id + 1) & 0xFFFF
            head = struct.pack("!BBHHHBBH", 0x45, 0, 20 + udp_len, self.ip_id, 0x4000, 64, 17, 0) + src.ip + dst.ip
            ip = head[:10] + struct.pack("!H", ipv4_checksum(head)) + head[12:]
            ip_masked = head[:1] + b"\xff" + head[2:8] + b"\xff" + head[9:10] + b"\xff\xff" + head[12:]
            ethertype = ETH_IPV4
        icrc = zlib.crc32(body, zlib.crc32(bth_masked, zlib.crc32(udp_masked, zlib.crc32(ip_masked,
                                                                                         zlib.crc32(FF8)))))
        frame_no = self.frame + 1
        icrc_ok = frame_no not in self.bad
        if not icrc_ok:
            icrc ^= 0xDEADBEEF
        frame = dst.mac + src.mac + struct.pack("!H", ethertype) + ip + udp + bth + body + struct.pack("<I", icrc)
        self._record(frame)
        if self.truth:
            if frame_no in self.truncate:
                rec = {"frame": frame_no, "malformed": True}
            else:
                rec = {"frame": frame_no, "time": self.time_text(), "src": src.ip_text, "dst": dst.ip_text,
                       "opcode": opcode, "opcode_name": OPCODES[opcode], "dest_qp": dest_qp, "psn": psn,
                       "ack_req": ack_req}
                if reth is not None:
                    rec["reth"] = {"va": reth[0], "rkey": reth[1], "length": reth[2]}
                if aeth is not None:
                    rec["aeth"] = {"syndrome": aeth[0], "msn": aeth[1]}
                rec["icrc_ok"] = icrc_ok
            self.truth.write(json.dumps(rec) + "\n")

    def other(self, kind, src, dst):
        if self.done():
            return
        if kind == "ARP":
            body = struct.pack("!HHBBH", 1, 0x0800, 6, 4, 1) + src.mac + b"\x0a\x00\x00\x01" + b"\0" * 6 + \
                b"\x0a\x00\x00\x02"
            frame = b"\xff" * 6 + src.mac + struct.pack("!H", ETH_ARP) + body + b"\0" * 18
        else:
            proto = 17 if kind == "DNS" else 6
            if proto == 17:
                l4 = struct.pack("!HHHH", 40000, 53, 8 + 29, 0) + b"\x12\x34\x01\x00\x00\x01\0\0\0\0\0\0" + \
                    b"\x07example\x03com\x00\x00\x01\x00\x01"
            else:
                l4 = struct.pack("!HHIIBBHHH", 40000, 22, 1, 0, 0x50, 0x02, 64240, 0, 0)
            head = struct.pack("!BBHHHBBH", 0x45, 0, 20 + len(l4), 0, 0x4000, 64, proto, 0) + \
                b"\x0a\x00\x00\x01\x0a\x00\x00\x02"
            ip = head[:10] + struct.pack("!H", ipv4_checksum(head)) + head[12:]
            frame = dst.mac + src.mac + struct.pack("!H", ETH_IPV4) + ip + l4
        frame_no = self.frame + 1
        self._record(frame)
        if self.truth:
            self.truth.write(json.dumps({"frame": frame_no, "other": kind}) + "\n")


class Conversation:
    """An RC connection (requester a, responder b) and a UD pair."""

    def __init__(self, w, a, b, qp_a, qp_b):
        self.w, self.a, self.b = w, a, b
        self.qp_a, self.qp_b = qp_a, qp_b
        self.psn = w.rng.randrange(0, 1 << 24)  # a's next request PSN
        self.msn = 0  # b's message sequence number
        self.rkey = w.rng.randrange(1, 1 << 32)
        self.va = 0x7F0000000000 + w.rng.randrange(0, 1 << 30) * 4096

    def next_psn(self):
        p = self.psn
        self.psn = (self.psn + 1) & 0xFFFFFF
        return p

    def ack(self, psn):
        """b answers: mostly an ACK, sometimes a NAK or an RNR NAK."""
        w = self.w
        r = w.rng.random()
        if r < 0.02:
            w.roce(self.b, self.a, 0x11, self.qp_a, psn, aeth=(0x20 | w.rng.randrange(1, 32), self.msn))
            return "rnr"
        if r < 0.04:
            w.roce(self.b, self.a, 0x11, self.qp_a, psn, aeth=(0x60, self.msn))  # PSN sequence error
            return "nak"
        self.msn = (self.msn + 1) & 0xFFFFFF
        w.roce(self.b, self.a, 0x11, self.qp_a, psn, aeth=(0x1F, self.msn))
        return "ack"

    def write(self, size, mtu):
        w = self.w
        first_psn = self.psn
        reth = (self.va, self.rkey, size)
        if size <= mtu:
            last = self.next_psn()
            w.roce(self.a, self.b, 0x0A, self.qp_b, last, ack_req=True, reth=reth, payload=size)
        else:
            n = (size + mtu - 1) // mtu
            for i in range(n):
                psn = self.next_psn()
                chunk = mtu if i < n - 1 else size - mtu * (n - 1)
                op = 0x06 if i == 0 else 0x08 if i == n - 1 else 0x07
                w.roce(self.a, self.b, op, self.qp_b, psn, ack_req=(i == n - 1), reth=reth if i == 0 else None,
                       payload=chunk)
                last = psn
        if self.ack(last) == "nak":
            self.psn = first_psn  # go back N: the same PSNs again
            self.write(size, mtu)

    def send(self, size):
        psn = self.next_psn()
        self.w.roce(self.a, self.b, 0x04, self.qp_b, psn, ack_req=True, payload=size, solicited=True)
        if self.ack(psn) == "nak":
            self.psn = psn
            self.send(size)

    def read(self, size, mtu):
        w = self.w
        psn = self.psn
        w.roce(self.a, self.b, 0x0C, self.qp_b, psn, ack_req=True, reth=(self.va, self.rkey, size))
        n = max(1, (size + mtu - 1) // mtu)
        self.psn = (self.psn + n) & 0xFFFFFF  # a read takes as many PSNs as responses
        self.msn = (self.msn + 1) & 0xFFFFFF
        for i in range(n):
            chunk = min(mtu, size - mtu * i)
            if n == 1:
                w.roce(self.b, self.a, 0x10, self.qp_a, psn, aeth=(0x1F, self.msn), payload=chunk)
            elif i == 0:
                w.roce(self.b, self.a, 0x0D, self.qp_a, psn, aeth=(0x1F, self.msn), payload=chunk)
            elif i == n - 1:
                w.roce(self.b, self.a, 0x0F, self.qp_a, (psn + i) & 0xFFFFFF, aeth=(0x1F, self.msn), payload=chunk)
            else:
                w.roce(self.b, self.a, 0x0E, self.qp_a, (psn + i) & 0xFFFFFF, payload=chunk)

    def ud(self):
        # A CM message: UD SEND ONLY to QP 1, Q_Key 0x80010000, 256 bytes of MAD.
        self.w.roce(self.a, self.b, 0x64, 1, self.w.rng.randrange(0, 1 << 24), deth=(0x80010000, 1), payload=256,
                    solicited=False)


def frame_list(text):
    return [int(x) for x in text.split(",") if x] if text else []


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--packets", type=int, default=100, help="frames to write (default 100)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--mtu", type=int, default=1024, help="RoCE path MTU: payload per packet (default 1024)")
    p.add_argument("--ipv6", type=float, default=0.0, help="share of the conversations over IPv6 (0..1)")
    p.add_argument("--other", type=float, default=0.0, help="share of non-RoCE frames (0..1)")
    p.add_argument("--bad-icrc", type=frame_list, default=[], help="frames whose ICRC is wrong: 3,17")
    p.add_argument("--truncate", type=frame_list, default=[], help="frames captured only in part: 5")
    p.add_argument("--nanoseconds", action="store_true", help="nanosecond pcap timestamps")
    p.add_argument("--truth", help="write the ground truth here (JSON Lines)")
    p.add_argument("--fuzz-corpus", help="also write each frame here as a seed of decode_fuzz")
    args = p.parse_args()

    with open(args.out, "wb") as out:
        w = Writer(out, args)
        a4 = Host("02:00:0a:00:00:01", "10.0.0.1", False, 0xC0A1)
        b4 = Host("02:00:0a:00:00:02", "10.0.0.2", False, 0xC0B2)
        a6 = Host("02:00:0a:00:00:01", "fd00::1", True, 0xC0A3)
        b6 = Host("02:00:0a:00:00:02", "fd00::2", True, 0xC0B4)
        convs4 = [Conversation(w, a4, b4, 0x11, 0x12), Conversation(w, b4, a4, 0x13, 0x14)]
        convs6 = [Conversation(w, a6, b6, 0x21, 0x22)]
        rng = w.rng
        sizes = [8, 13, 64, 256, 1000, 1024, 4096, 8192]
        while not w.done():
            if args.other and rng.random() < args.other:
                w.other(rng.choice(["ARP", "DNS", "TCP"]), a4, b4)
                continue
            conv = rng.choice(convs6 if args.ipv6 and rng.random() < args.ipv6 else convs4)
            r = rng.random()
            if r < 0.45:
                conv.write(rng.choice(sizes), args.mtu)
            elif r < 0.70:
                conv.send(rng.choice(sizes[:5]))
            elif r < 0.95:
                conv.read(rng.choice(sizes), args.mtu)
            else:
                conv.ud()
        w.flush()
    if w.truth:
        w.truth.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
