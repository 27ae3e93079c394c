#!/usr/bin/env python3
"""Measure the code-path instruction counts (configs/costs/linux-6.1-arm64.json) from Debian's
compiled Linux 6.1 kernel: vmlinux, fec.ko and mvneta.ko with their debug info, disassembled with
binutils. docs/firmware.md "Code-path costs" describes the method and its error.

Walk each function from its entry along the compiler's likely path -- fall-through and
unconditional branches; conditional branches not taken unless the table below says the modelled
experiment takes them -- up to the return or tail call. A backward branch on the path closes a
loop: its body is counted once per iteration under the per-iteration key, the rest per call.
Inlined functions are attributed with the DWARF inline chain to the key that charges them, so no
instruction is counted under two keys. Left out, as the core model charges them: MMIO accessors,
barriers (dmb/dsb/isb) and cache-line operations (dc).

--sequence KEY prints the instructions an arm64 key counts, in walk order, as llvm-mca input; --mca
times every key's sequence with llvm-mca's in-order Cortex-A53 model (cycles per pass, L1 hits,
branches predicted: see MCA_ITERATIONS and mca_line) and prints instructions, cycles and IPC.

Usage: scripts/kernel-costs.py [--abi 6.1.0-N | --abi newest] [--trace KEY | --sequence KEY | --mca | --markdown]
Downloads (once, cached in $FECSIM_KERNEL_CACHE or ~/.cache/fecsim-kernel) the kernel's -dbg
package with apt-get and installs binutils for the target if missing (make costs; not CI).
The kernel build is pinned (PINNED below): the steering offsets in TAKES belong to one compiled
layout, so another build would walk other branches. Re-pin only together with the steering.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.environ.get("FECSIM_KERNEL_CACHE", os.path.expanduser("~/.cache/fecsim-kernel"))

ARCHES = {
    "arm64": dict(deb="arm64", flavour="arm64", tool="aarch64-linux-gnu", binutils="binutils-aarch64-linux-gnu"),
    "armhf": dict(deb="armhf", flavour="armmp", tool="arm-linux-gnueabihf", binutils="binutils-arm-linux-gnueabihf"),
}


# The build the committed tables were measured from, and whose layout TAKES steers.
PINNED = dict(abi="6.1.0-50", version="6.1.176-1")


def die(msg):
    print("kernel-costs: " + msg, file=sys.stderr)
    sys.exit(2)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, stdout=subprocess.PIPE, **kw).stdout


# ------------------------------------------------------------------------------------------------
# packages


def apt_ready(arch):
    have = run(["dpkg", "--print-foreign-architectures"]).split()
    if arch["deb"] not in have and arch["deb"] != run(["dpkg", "--print-architecture"]).strip():
        subprocess.run(["dpkg", "--add-architecture", arch["deb"]], check=True)
        subprocess.run(["apt-get", "update", "-qq"], check=False)
    if subprocess.run(["which", arch["tool"] + "-objdump"], stdout=subprocess.DEVNULL).returncode:
        subprocess.run(["apt-get", "install", "-y", "-qq", arch["binutils"]], check=True)


def newest_abi(arch):
    pattern = r"^linux-image-6\.1\.0-[0-9]+-%s-dbg$" % arch["flavour"]
    out = run(["apt-cache", "search", "--names-only", pattern])
    if not out.strip():
        subprocess.run(["apt-get", "update", "-qq"], check=False)
        out = run(["apt-cache", "search", "--names-only", pattern])
    abis = sorted({int(m) for m in re.findall(r"linux-image-6\.1\.0-(\d+)-", out)})
    if not abis:
        die("apt knows no linux-image-6.1.0-*-%s-dbg (:%s); run apt-get update" % (arch["flavour"], arch["deb"]))
    return "6.1.0-%d" % abis[-1]


def fetch(arch, abi, version=None):
    """{'vmlinux', 'fec', 'mvneta': paths, 'package': the .deb's name}; downloads and extracts once.
    `version`: the Debian version the package must have (the pinned build), None for any."""
    pkg = "linux-image-%s-%s-dbg" % (abi, arch["flavour"])
    dest = os.path.join(CACHE, pkg)
    mods = "usr/lib/debug/lib/modules/%s-%s/kernel/drivers/net/ethernet/" % (abi, arch["flavour"])
    rel = {"vmlinux": "usr/lib/debug/boot/vmlinux-%s-%s" % (abi, arch["flavour"]),
           "fec": mods + "freescale/fec.ko", "mvneta": mods + "marvell/mvneta.ko",
           "pktgen": mods.replace("drivers/net/ethernet/", "net/core/pktgen.ko")}
    files = {k: os.path.join(dest, v) for k, v in rel.items()}
    deb_glob = os.path.join(CACHE, "%s_%s_%s.deb" % (pkg, version or "*", arch["deb"]))
    debs = glob.glob(deb_glob)
    if not debs and version and glob.glob(os.path.join(CACHE, pkg + "_*_%s.deb" % arch["deb"])):
        die("%s: the cache holds another version than the pinned %s; remove %s" % (pkg, version, dest))
    if not all(os.path.exists(f) for f in files.values()):
        os.makedirs(CACHE, exist_ok=True)
        if not debs:
            apt_ready(arch)
            want = "%s:%s" % (pkg, arch["deb"]) + ("=" + version if version else "")
            if subprocess.run(["apt-get", "download", "-q", want], cwd=CACHE).returncode:
                die("apt-get cannot download %s%s; run apt-get update, or measure another build with --abi "
                    "(its walks then need steering anew)" % (want, " (the pinned build)" if version else ""))
            debs = glob.glob(deb_glob)
        os.makedirs(dest, exist_ok=True)
        print("kernel-costs: extracting vmlinux, fec.ko, mvneta.ko, pktgen.ko from %s (a few minutes)" % os.path.basename(debs[0]),
              file=sys.stderr)
        subprocess.run("dpkg-deb --fsys-tarfile '%s' | tar -x -C '%s' %s" %
                       (debs[0], dest, " ".join("./" + v for v in rel.values())), shell=True, check=True)
    apt_ready(arch)
    files["package"] = os.path.basename(debs[0])[:-len(".deb")] if debs else pkg
    return files


# ------------------------------------------------------------------------------------------------
# disassembly


class Insn:
    __slots__ = ("addr", "mn", "ops", "chain", "call")

    def __init__(self, addr, mn, ops, chain):
        self.addr, self.mn, self.ops, self.chain, self.call = addr, mn, ops, chain, None


class Objfile:
    def __init__(self, path, tool):
        self.path, self.tool = path, tool
        self.syms = {}
        for line in run([tool + "-nm", "-S", path]).splitlines():
            f = line.split()
            if len(f) == 4 and f[2] in "tTW":
                self.syms.setdefault(f[3], []).append((int(f[0], 16), int(f[1], 16)))

    def function(self, name, pick=0):
        """[start, end) of function `name`; `pick` chooses among static functions of the same name:
        an index by address, or the source file that defines it."""
        if name not in self.syms:  # a GCC clone (.constprop.0, .isra.0) on one architecture only
            clones = [n for n in self.syms if n.split(".")[0] == name.split(".")[0]]
            if len(clones) != 1:
                die("%s: no function %s" % (os.path.basename(self.path), name))
            name = clones[0]
        cands = sorted(self.syms[name])
        if isinstance(pick, str):
            files = run([self.tool + "-addr2line", "-e", self.path] + ["%#x" % s for s, _ in cands]).split()
            cands = [c for c, f in zip(cands, files) if f.split(":")[0].endswith(pick)]
            if len(cands) != 1:
                die("%s: no single %s in %s" % (os.path.basename(self.path), name, pick))
            pick = 0
        start, size = cands[pick]
        return start, start + size

    def disassemble(self, start, end):
        """Instructions of [start, end) with their inline chains (innermost function first)."""
        out = run([self.tool + "-objdump", "-d", "-r", "-l", "--inlines", "--no-show-raw-insn", "-j", ".text",
                   "--start-address=%#x" % start, "--stop-address=%#x" % end, self.path])
        insns, func, line_no, outer, after_insn = [], None, 0, [], False
        for line in out.splitlines():
            m = re.match(r"^\s*([0-9a-f]+):\s+(R_\S+)\s+(\S+)", line)
            if m:
                if insns and m.group(2).endswith(("CALL26", "JUMP26", "ARM_CALL", "ARM_JUMP24")):
                    insns[-1].call = re.sub(r"[+-]0x[0-9a-f]+$", "", m.group(3))
                continue
            m = re.match(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
            if m:
                insns.append(Insn(int(m.group(1), 16), m.group(2), m.group(3), [(func or "?", line_no)] + outer))
                after_insn = True
                continue
            m = re.match(r"^([A-Za-z_][\w.]*)\(\):$", line)
            if m:
                func, outer, after_insn = m.group(1), [], False
                continue
            m = re.match(r"^inlined by \S+:(\d+)(?: \(discriminator \d+\))? \(([\w.]+)\)$", line)
            if m:
                if after_insn:
                    outer, after_insn = [], False
                outer.append((m.group(2), int(m.group(1))))
                continue
            m = re.match(r"^\S+:(\d+)", line)
            if m:
                line_no, outer, after_insn = int(m.group(1)), [], False
        return insns


# ------------------------------------------------------------------------------------------------
# the likely-path walk

BARRIER = re.compile(r"^(dmb|dsb|isb|dc|ic)$")
MMIO = ("__raw_readl", "__raw_writel", "__raw_readw", "__raw_writew", "__raw_readb", "__raw_writeb")
A64_COND = re.compile(r"^(b\.\w+|cbn?z|tbn?z)$")
A64_RET = re.compile(r"^(ret|retaa|retab|eret|br|braa|braaz)$")
A32_COND = re.compile(r"^(b(eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le)(\.w|\.n)?|cbn?z)$")


def target_of(insn):
    m = re.search(r"\b([0-9a-f]+) <", insn.ops)
    return int(m.group(1), 16) if m else None


def kind(insn, arch):
    """'cond', 'jump', 'ret', 'cond_ret' (an ARM conditional return: plain unless the walk takes it) or
    None for a plain instruction (calls are plain: the callee has its own key)."""
    mn = insn.mn
    if arch == "arm64":
        if A64_COND.match(mn):
            return "cond"
        if mn == "b":
            return "jump"
        if A64_RET.match(mn):
            return "ret"
        return None
    if A32_COND.match(mn):
        return "cond"
    if mn in ("b", "b.w", "b.n"):
        return "jump"
    if re.match(r"^bx(eq|ne|cs|cc|mi|pl|hi|ls|ge|lt|gt|le)$", mn) and insn.ops.startswith("lr"):
        return "cond_ret"
    if mn == "bx" or (mn.startswith(("pop", "ldm")) and "pc" in insn.ops):  # return, or tail call via bx
        return "ret" if not re.match(r"^(pop|ldm\w*)(eq|ne|cs|cc|mi|pl|hi|ls|ge|lt|gt|le)", mn) else "cond_ret"
    if re.match(r"^ldr\w*$", mn) and insn.ops.startswith("pc,"):
        return "ret"
    return None


def walk(insns, arch, start, end, take=(), follow=False, rotated=False):
    """The likely path from the entry: (path, loops, next_entry). loops = [(indices, back_edge)]:
    the path indices of one iteration and of the branch closing it. `take` lists the conditional
    branches (offsets from the entry) the modelled experiment takes, (offset, N) for entry N of
    a jump table, and ("exit", offset) for the loop condition a closed loop leaves by (by default the
    last exit on the path): the one pass then tests it again, from the loop's head to that branch,
    before it leaves. `follow` continues across a
    jump out of the function (assembly entry code), returning its target as next_entry. A backward
    branch into code not on the path joins earlier code, unless `rotated`: then it closes a loop
    the compiler rotated (entered by a jump over its body to the condition)."""
    tables = dict(t for t in take if isinstance(t, tuple) and t[0] != "exit")
    exit_at = {t[1] for t in take if isinstance(t, tuple) and t[0] == "exit"}
    at = {i.addr: i for i in insns}
    after = {a.addr: b.addr for a, b in zip(insns, insns[1:])}
    pc, path, index, loops, pending, jumps = start, [], {}, [], [], []

    def close_loop(head, back):
        """Not taking (or having taken) the branch at path[back] back to `head` ends one iteration."""
        if head not in index:  # a rotated loop entered at its condition: add the body once
            a = head
            while a is not None and a not in index and a < path[back].addr:
                index[a] = len(path)
                path.append(at[a])
                a = after.get(a)
            body = [index[a] for a in index if head <= a <= path[back].addr]
        else:
            body = list(range(index[head], back + 1))
        loops.append((sorted(set(body)), back))

    for _ in range(10000):
        if pc is None or pc not in at:
            break
        if pc in index:  # a jump back into the path: the end of one loop iteration
            close_loop(pc, len(path) - 1)
            body = {path[k].addr for k in loops[-1][0]}
            exits = [j for j in pending if j.addr in body and target_of(j) not in body]
            if not exits:
                die("%#x: the loop at %#x has no exit on the path" % (start, pc))
            chosen = [j for j in exits if j.addr - start in exit_at]
            if exit_at and not chosen:
                die("%#x: the loop at %#x cannot leave at %s" % (start, pc, ", ".join("%#x" % o for o in exit_at)))
            if chosen:  # the condition tested once more: the head's instructions up to the exit run again
                path.extend(path[index[pc]:index[chosen[-1].addr] + 1])
            pc = target_of((chosen or exits)[-1])
            pending = []
            continue
        i = at[pc]
        index[pc] = len(path)
        path.append(i)
        k, t = kind(i, arch), target_of(i)
        if pc - start in tables:  # an ARM jump table, ldr pc, [pc, rN, lsl #2]: entry N
            pc = int(at[pc + 8 + 4 * tables[pc - start]].ops.split()[0], 16)
            continue
        if k == "ret" or (k == "cond_ret" and pc - start in take):
            break
        if k == "jump":
            if t is None or not (start <= t < end):
                return path, loops, t if follow else None
            jumps.append((pc, t))
            pc = t
            continue
        if k == "cond" and t is not None and t != pc:
            if pc - start in take:
                pc = t
                continue
            if start <= t < pc and (t in index or rotated and any(src < t < dst <= pc for src, dst in jumps)):
                close_loop(t, len(path) - 1)
            else:
                pending.append(i)
        pc = after.get(pc)
    return path, loops, None


# ------------------------------------------------------------------------------------------------
# counting


def excluded(insn):
    """Charged by the core model itself: barriers, cache-line operations, MMIO accessors."""
    if insn.mn.startswith("mcr") and "cr7," in insn.ops:  # ARMv7 cache maintenance (CP15 c7)
        return True
    return bool(BARRIER.match(insn.mn)) or any(re.match(r"^(__raw_)?(read|write)[bwlq](_relaxed)?$", f)
                                               for f, _ in insn.chain)


class Part:
    """Instructions of one walk: of function `fn` in object `obj`, owned by `owner` (an inlined
    function, default the function itself), optionally only source lines `lines` of the owner,
    only the instructions at `offsets` from the entry ((first, last) ranges, all on the walk) or
    all but those (`not_offsets`; `label` names the part they make), or only the instructions at `back`
    (straight ranges a loop runs to return to its head for a further iteration, off the one-pass walk
    or on it: each entered by a branch on the walk or from a conditional one's fall-through, and left
    by a jump or a fall-through onto the walk), and `loop` = "body" (once per iteration of the owner's
    loop) or "call" (the rest). `avoid`:
    functions the modelled path never calls from the owner, `need`: functions it always calls; a
    walk that calls an avoided one or misses a needed one took the wrong branch, an error."""

    def __init__(self, obj, fn, owner=None, loop=None, lines=None, take=(), pick=0, follow=False, not_lines=None,
                 group=None, rotated=False, avoid=None, need=None, offsets=None, not_offsets=None, label=None,
                 back=None):
        self.obj, self.fn, self.owner, self.loop, self.lines, self.group = obj, fn, owner or fn, loop, lines, group
        self.offsets, self.not_offsets, self.label, self.back = offsets, not_offsets, label, back
        self.rotated = rotated
        self.take, self.pick, self.follow, self.not_lines, self.avoid = take, pick, follow, not_lines, avoid
        self.need = need


class Counter:
    def __init__(self, objs, arch, spec):
        self.objs, self.arch, self.walks = objs, arch, {}
        # every owner named for a walk, so an inlined helper is charged to the innermost of them
        self.owners = {}
        for parts in spec.values():
            for p in parts.get("parts", ()):
                self.owners.setdefault((p.obj, p.fn), {p.fn}).add(p.owner)

    def walked(self, p):
        key = (p.obj, p.fn, p.take, p.pick, p.rotated)
        if key not in self.walks:
            obj = self.objs[p.obj]
            start, end = obj.function(p.fn, p.pick)
            take = TAKES.get(self.arch, {}).get(p.take, ()) if isinstance(p.take, str) else p.take
            path, loops, nxt = walk(obj.disassemble(start, end), self.arch, start, end, take, p.follow, p.rotated)
            ranges = [(p.fn, start, end)]
            while nxt is not None:  # assembly: continue in the symbol the jump enters
                name = next((n for n, v in obj.syms.items() for s, z in v if s <= nxt < s + z), None)
                if name is None:
                    break
                s, e = next((s, s + z) for s, z in obj.syms[name] if s <= nxt < s + z)
                more, _, nxt = walk(obj.disassemble(s, e), self.arch, s, e, (), True)
                path += more
                ranges.append((name, s, e))
            tracked = self.owners.get((p.obj, p.fn), {p.fn})
            owner = []
            for i in path:
                own = next((c for c in i.chain if c[0] in tracked), (p.fn, 0))
                owner.append(own)
            inloop = [set() for _ in path]
            for body, back in loops:
                for k in body:
                    inloop[k].add(owner[back][0])
            self.walks[key] = (path, owner, inloop, ranges)
        return self.walks[key]

    def count_back(self, p):
        """The instructions of `p.back`, checked to join the walk at both ends (see Part)."""
        path, _, _, ranges = self.walked(p)
        fn, start, end = ranges[0]
        insns = self.objs[p.obj].disassemble(start, end)
        at = {i.addr - start: i for i in insns}
        after = {a.addr - start: b.addr - start for a, b in zip(insns, insns[1:])}
        walked = {i.addr - start for i in path}
        entries = set()
        for i in path:
            k, t = kind(i, self.arch), target_of(i)
            if k in ("cond", "jump") and t is not None:
                entries.add(t - start)
            if k == "cond":
                entries.add(after.get(i.addr - start))
        seq = []
        for first, last in p.back:
            span = [o for o in sorted(at) if first <= o <= last]
            ok = bool(span) and span[-1] == last and first in entries and not any(kind(at[o], self.arch)
                                                                                  for o in span[:-1])
            if ok:
                k = kind(at[last], self.arch)
                leave = target_of(at[last]) - start if k == "jump" else after.get(last) if k is None else None
                ok = leave in walked
            if not ok:
                die("%s: the branch back %#x-%#x does not join the walk at both ends: the layout moved, "
                    "measure it anew" % (p.fn, first, last))
            seq += [at[o] for o in span if not excluded(at[o])]
        return seq, {"name": fn + " (%s)" % (p.label or "branches back"), "object": p.obj, "start": "%#x" % start,
                     "end": "%#x" % end, "count": len(seq)}

    def count(self, p):
        """(the instructions counted in walk order, the JSON record of the part)"""
        if p.back:
            return self.count_back(p)
        path, owner, inloop, ranges = self.walked(p)
        # the branch checks hold where this architecture's walk is steered (TAKES names the take)
        steered = not isinstance(p.take, str) or p.take in TAKES.get(self.arch, {})
        seq, calls = [], set()
        entry = ranges[0][1]
        spans = p.offsets or p.not_offsets or ()
        walked = {i.addr - entry for i in path}
        off_walk = [o for span in spans for o in span if o not in walked]
        if off_walk:
            die("%s: offsets %s are not on the walk: the layout moved, measure the spans anew"
                % (p.fn, ", ".join("%#x" % o for o in off_walk)))
        def in_spans(i):
            return any(a <= i.addr - entry <= b for a, b in spans)
        for i, (name, line), loops in zip(path, owner, inloop):
            if name != p.owner or excluded(i):
                continue
            if i.mn in ("bl", "blx"):
                calls.update(re.findall(r"<([\w.]+)", i.ops))
            if p.avoid and steered and i.mn in ("bl", "blx") and any("<%s" % f in i.ops for f in p.avoid):
                die("%s > %s: the walk calls %s at %#x (line %d), which the modelled path does not: steer it "
                    "with TAKES" % (p.fn, p.owner, i.ops, i.addr, line))
            if p.lines and not (p.lines[0] <= line <= p.lines[1]):
                continue
            if p.not_lines and p.not_lines[0] <= line <= p.not_lines[1]:
                continue
            if (p.offsets and not in_spans(i)) or (p.not_offsets and in_spans(i)):
                continue
            if p.loop and (name in loops) != (p.loop == "body"):
                continue
            seq.append(i)
        missing = [f for f in p.need or () if f not in calls] if steered else []
        if missing:
            die("%s > %s: the walk does not call %s, which the modelled path does: steer it with TAKES"
                % (p.fn, p.owner, ", ".join(missing)))
        fn, start, end = ranges[0]
        return seq, {"name": " + ".join(r[0] for r in ranges) + ("" if p.owner == p.fn else " > " + p.owner) +
                   ("" if not p.loop else " (loop %s)" % p.loop) +
                   ("" if not p.lines else " (lines %d-%d)" % p.lines) +
                   ("" if not p.label else " (%s)" % p.label),
                   "object": p.obj, "start": "%#x" % start, "end": "%#x" % end, "count": len(seq)}


# ------------------------------------------------------------------------------------------------
# cycles from llvm-mca: the counted instructions of a key, timed by LLVM's in-order Cortex-A53 model

MCA_CPU = "cortex-a53"
# The sequence is run this many times back to back and the cycles are divided by it: the per-pass
# figure of a full pipeline, as when other code runs before and after the key (the core does not
# drain between functions). One pass alone (--mca-iterations 1) adds the fill and the last results'
# latency, a few cycles per key.
MCA_ITERATIONS = 100
# hint-space instructions an ARMv8.0 core (A53, A35) executes as NOPs; llvm-mca 14 has no timing for them
HINT_NOPS = {"paciasp", "autiasp", "pacibsp", "autibsp", "paciaz", "autiaz", "pacibz", "autibz", "xpaclri"}


# A call is timed as the branch it is: the callee charges its own key, and llvm-mca gives a call
# it cannot see into a placeholder latency of 100 cycles
AS_BRANCH = {"bl": "b", "blr": "br"}


def mca_line(insn):
    """One counted instruction as llvm-mc assembly: objdump's comments dropped, every branch, call
    and literal target pointed at one label (llvm-mca follows no branch: each is issued, none taken
    or mispredicted)."""
    if insn.mn in HINT_NOPS:
        return "nop"
    ops = re.sub(r"\s*//.*$", "", insn.ops)
    ops = re.sub(r"\b[0-9a-f]+ <[^>]*>", ".Lpath", ops)
    return ("%s %s" % (AS_BRANCH.get(insn.mn, insn.mn), ops)).strip()


def mca_source(insns):
    return ".Lpath:\n" + "".join(mca_line(i) + "\n" for i in insns)


def mca_parse(out):
    """(instructions, cycles) per pass from llvm-mca's summary."""
    fields = dict(re.findall(r"^(Iterations|Instructions|Total Cycles):\s+(\d+)$", out, re.M))
    if len(fields) != 3 or not int(fields["Iterations"]):
        die("llvm-mca printed no summary (Iterations, Instructions, Total Cycles)")
    passes = int(fields["Iterations"])
    return int(fields["Instructions"]) / passes, int(fields["Total Cycles"]) / passes


def mca_cycles(insns, iterations=MCA_ITERATIONS, cpu=MCA_CPU):
    """Cycles per pass of `insns` (L1 hits, branches predicted; see MCA_ITERATIONS)."""
    if not insns:
        return 0.0
    if shutil.which("llvm-mca") is None:
        die("llvm-mca not found: install Debian's llvm (scripts/install-deps.sh)")
    # +mte: the kernel's `msr tco` (its NOP-like MTE tag-check override) assembles; it is timed as a PSTATE write
    r = subprocess.run(["llvm-mca", "-mtriple=aarch64", "-mcpu=" + cpu, "-mattr=+mte", "-iterations=%d" % iterations],
                       input=mca_source(insns), text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode:
        die("llvm-mca refused the sequence: " + " ".join(r.stderr.split("\n")[:2]).strip())
    n, cycles = mca_parse(r.stdout)
    if n != len(insns):
        die("llvm-mca ran %g instructions per pass, the sequence has %d" % (n, len(insns)))
    return cycles


def walk_key(counter, spec):
    """A measured key's counted instructions in walk order by group (an alternative of a "mean" key,
    else each part alone), and each part's JSON record."""
    groups, funcs = {}, []
    for k, p in enumerate(spec["parts"]):
        seq, f = counter.count(p)
        groups.setdefault(p.group or k, []).extend(seq)
        funcs.append(f)
    return groups, funcs


def key_sequences(counter, spec):
    """The counted instructions of a key in walk order, one list per alternative (one unless "mean")."""
    groups = walk_key(counter, spec)[0]
    return list(groups.values()) if spec.get("mean") else [[i for g in groups.values() for i in g]]


def mix(insns):
    """(loads, stores, conditional branches) among `insns`: what sets an in-order core's stalls."""
    return (sum(1 for i in insns if i.mn.startswith("ld")), sum(1 for i in insns if i.mn.startswith("st")),
            sum(1 for i in insns if A64_COND.match(i.mn)))


def mca_table(counter, spec, keys, iterations, cpu):
    """Markdown: per measured key, instructions, llvm-mca cycles per pass, IPC, and the loads, stores
    and conditional branches among the instructions (means of the alternatives for a "mean" key)."""
    print("| path | instructions | mca cycles | mca IPC | loads | stores | cond. branches |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for key in keys:
        if "parts" not in spec[key]:
            continue
        alts = key_sequences(counter, spec[key])
        n = sum(len(a) for a in alts) / len(alts)
        cycles = sum(mca_cycles(a, iterations, cpu) for a in alts) / len(alts)
        kinds = [sum(m) / len(alts) for m in zip(*(mix(a) for a in alts))]
        print("| `%s` | %g | %.2f | %s | %g | %g | %g |" % (key, n, cycles, "%.3f" % (n / cycles) if cycles else "—",
                                                        *kinds))


# ------------------------------------------------------------------------------------------------
# what each key counts (firmware/ charges the key where it calls k_.exec(path::KEY))

V, F, M, P = "vmlinux", "fec", "mvneta", "pktgen"
# The conditional branches the modelled experiment takes, as offsets from the function's entry
# per architecture (found by reading the walk with --trace). Parts name them; an architecture
# without an entry walks the compiler's layout. fec_enet_rx_napi on the i.MX8MP profile: RACC,
# enhanced BDs, VLAN offload on but no VLAN tag, no RX timestamps, checksum offload, TX
# completions without error or deferral, queue awake.
TAKES = {
    "arm64": {
        "rx_napi": (0x2cc, 0x31c, 0x328, 0x4dc, 0x550, 0x588, 0x5d0),
        "rx_error": (0x17c,),  # the error branch of the RX loop
        "xdp_tx": (0x234, 0x62c, 0x4f4),  # mvneta_run_xdp: act > XDP_PASS, act == XDP_TX; frame sent
        # fec_enet_start_xmit: not GSO, aligned data, no SWAP_FRAME (so no tx_bounce copy), queue not full
        "xmit": (0x6c, 0x478, 0x7e4, 0x740),
        "xmit_frags": (0x6c, 0x478, 0x7e4, 0x740, 0x504),  # ... with fragments
        "interrupt": (0x5c,),  # events and link up: schedule NAPI
        # dma-direct: no dma_range_map, non-coherent device, buffer outside the swiotlb pool
        "sync_cpu": (0x48, 0x80, 0x94, 0xb4), "sync_dev": (0x40, 0xb4, 0x78), 
        # dma_map/unmap_page_attrs: dma-direct, as above; without DMA_ATTR_SKIP_CPU_SYNC (a streaming
        # map or unmap) the branch to the cache maintenance, with it (page_pool's) the return
        "map": (0x9c, 0x148), "map_skip": (0x9c,), "unmap": (0x4c, 0xfc, 0xc0, 0xd4), "unmap_skip": (0x4c,),
        "unmap_arch": (0xc,),  # arch_sync_dma_for_cpu returns at once for DMA_TO_DEVICE
        # swiotlb (a buffer beyond the device's DMA mask): the slot's offset is within the mapping (the FEC
        # has no min_align_mask); dma_direct_unmap_page unmaps with DMA_ATTR_SKIP_CPU_SYNC (its sync for
        # the CPU has copied already); the sync for the CPU of a DMA_FROM_DEVICE mapping copies
        "bounce": (0x7c,), "tbl_unmap": (0x20,), "release": (0x138, 0x170, 0x158), "swiotlb_sync_cpu": (0xc,),
        # swiotlb_map: the device has a DMA mask (0xac) and is not coherent (0xbc: the clean of the slot)
        "swiotlb_map": (0xac, 0xbc),
        # swiotlb_tbl_map_single: no segment boundary (0x100), a mapping below a page (0x158); the
        # search's first slot is aligned as the original (0x200, 0x2b0: no min_align_mask), no span
        # boundary (0x204), and free (0x27c); one slot (0x464); the slot before it is not a segment's
        # last (0x4cc: the loop over the free slots before the run, which finds its first one in use)
        "tbl_map": (0x100, 0x158, 0x200, 0x2b0, 0x204, 0x27c, 0x464, 0x4cc),
        "memcpy_large": (0x10,),  # __memcpy: more than 128 bytes, forward, the 64-byte loop
        # page_pool_put_defragged_page on fec's pool (PP_FLAG_DMA_SYNC_DEV: the sync for the device),
        # with allow_direct (XDP in NAPI: into the alloc cache) or without (an skb's page: the ring)
        "put_direct": (0x44,), "put_ring": (0x44, 0x1ac),
        # fec's pool: page_pool_dma_map succeeds, PP_FLAG_DMA_SYNC_DEV, no init_callback; the pool's
        # nid is NUMA_NO_NODE (dev_to_node of a platform device), so the refill asks numa_mem_id()
        "pp_slow": (0x144, 0xec), "pp_dma_map": (0x54,), "pp_refill": (0x40,),
        "release_head": (0x3c,),  # skb_release_head_state: no conntrack entry (no netfilter rules)
        "ip_local": (0x50,),  # ip_local_deliver: not a fragment
        "ip_proto": (0x64, 0x40),  # ip_protocol_deliver_rcu: TCP and UDP are no_policy (no xfrm check, no
        # nf_reset_ct); the handler returns >= 0 (no resubmit)
        "cleanup_rbuf": (0x30,),  # tcp_cleanup_rbuf: the WARN on a fully copied head skb does not fire
        "xdp_return_pp": (0x20,),  # __xdp_return: MEM_TYPE_PAGE_POOL
        "list_empty": (0x3c,),  # __cpu_map_flush / __xsk_map_flush: nothing queued
        "copy_large": (0x6c, 0xfc),  # __arch_copy_to_user: 128 bytes or more, the 64-byte loop
        "pktgen": (0x160, 0x238, 0x164, 0xcdc, 0xe90, 0xec4, 0x4bc, 0x504, 0x10d4, 0xbc4, 0xae8, 0x614),  # pktgen_thread_worker: a running device, queue awake, NETDEV_TX_OK
        "unref_shared": (0x28,),  # kfree_skb_reason: skb_unref finds users > 1
        "netdev_frag": (0x38, 0x10c),  # __netdev_alloc_skb: a page_frag head (2 KiB, GFP_ATOMIC), no pfmemalloc
        "frag_put": (0x68,),  # page_frag_free: other references remain (the page is freed by its own key)
        # tcp_v4_rcv on an established segment: PACKET_HOST; a GRO skb (CHECKSUM_PARTIAL, start offset
        # valid: csum_valid set); no early-demux socket on the skb, so __inet_lookup finds the
        # established socket; not TIME_WAIT, not NEW_SYN_RECV; no xfrm policy (default accept); the socket
        # filter passes; the socket is not owned by the reader; the looked-up socket is refcounted (sock_put)
        "v4_rcv": (0x78, 0x144, 0x1d4, 0x398, 0x204, 0x598, 0xaa8, 0xd00, 0xb0c, 0xc28),
        # ... the socket early demux put on the skb (0x1d4 falls through: skb_steal_sock, not prefetched), no
        # lookup; the rest as above
        "v4_rcv_demuxed": (0x78, 0x144, 0x204, 0x598, 0xaa8, 0xd00, 0xb0c, 0xc28),
        # ip_rcv_finish of a TCP segment early demux routed: no l3mdev (0x3c); ip_rcv_finish_core without a
        # hint (0x38), early demux on, no dst or socket on the skb yet, not a fragment, TCP (0x25c):
        # tcp_v4_early_demux; its dst valid, not metadata (0x50: no ip_route_input_noref), no NOPOLICY
        # (0x128), no tclassid, no options, unicast
        "rcv_finish_demuxed": (0x3c,), "rcv_finish_core_demuxed": (0x38, 0x25c, 0x50, 0x128),
        # tcp_v4_early_demux: PACKET_HOST (0x28), the header linear, not an l3 slave (0xa4); the established
        # socket found, a full socket with its rx dst, which has DST_OBSOLETE_FORCE_CHK (0xf0): ipv4_dst_check
        # finds it current; same input device: skb_dst_set_noref
        "early_demux": (0x28, 0xa4, 0xf0), "dst_check": (),
        # fec_enet_clear_csum of a CHECKSUM_PARTIAL skb (0x14), not cloned (0x3c), ETH_P_IP (0x64), IPv4
        "clear_csum": (0x14, 0x3c, 0x64),
        # tcp_v4_do_rcv: TCP_ESTABLISHED (rx dst valid), the RX queue the skb records (0x154: fec records it), the
        # socket's unchanged (0x1bc)
        "v4_do_rcv": (0x2c, 0x154, 0x1bc),
        # __inet_lookup_established: the first entry of the bucket matches, not bound to a device,
        # refcount_inc_not_zero succeeds (LL/SC: the A35/A53 have no LSE atomics), the match re-checked
        "lookup_est": (0x80, 0xfc, 0x178, 0x148, 0x1a8, 0x220),
        # tcp_rcv_established: header prediction hits (flags, seq == rcv_nxt), aligned timestamps, PAWS
        # passes, data (len > header), checksum valid, truesize within sk_forward_alloc, the timestamp
        # not stored (rcv_nxt != rcv_wup between ACKs), no new tsecr to measure, the skb's noref dst
        # dropped, the ACK number is snd_una (the DUT sends no data): tcp_update_wl
        "rcv_est": (0x74, 0x35c, 0x384, 0x440, 0x6b8, 0x464, 0x4f4, 0x6f4, 0x504, 0x5b4, 0x60c),
        # ... the same segment whose truesize exceeds sk_forward_alloc (b.gt at 0x4ec): step5, tcp_ack with
        # FLAG_SLOWPATH, no new tsecr to measure (tcp_rcv_rtt_measure_ts), tcp_urg, tcp_data_queue,
        # nothing to send (tcp_data_snd_check: tcp_check_space), an ACK scheduled (__tcp_ack_snd_check)
        "rcv_est_slow": (0x74, 0x35c, 0x384, 0x440, 0x6b8, 0x464, 0x4ec, 0x224),
        # tcp_ack(FLAG_SLOWPATH | FLAG_UPDATE_TS_RECENT) of a data segment whose ACK number is snd_una: SACK on
        # but nothing SACKed (prior_fack = snd_una), the timestamp not stored (seq after rcv_wup), the
        # window update test passes on the sequence (tcp_update_wl), the sender's window unchanged, no
        # SACK blocks, no ECE, nothing delivered, nothing in flight (prior_packets 0: no_queue), nothing
        # to send (tcp_ack_probe), no tail loss probe
        "ack_slow": (0xd4, 0x260, 0x168, 0x2f0, 0x338, 0xaa0),
        "in_ack_event": (0x14,),  # CUBIC has no in_ack_event callback
        # tcp_data_queue, in order: the noref dst dropped, no skb extension, seq == rcv_nxt, window open,
        # the receive queue not empty (tcp_try_rmem_schedule), data (tcp_event_data_recv), no FIN, no
        # out-of-order queue, no SACK blocks, fast path re-armed, not coalesced (eaten 0), socket alive
        "data_queue_in_order": (0x5c, 0x39c, 0xbc, 0x3fc, 0x40c, 0x5c4, 0x5cc, 0x5e0),
        # tcp_queue_rcv: the receive queue's tail cannot take the skb (tcp_try_coalesce fails: a GRO skb's
        # frags do not fit the tail's): __skb_queue_tail, skb_set_owner_r
        "queue_rcv": (0x48, 0xc0),  # ... and no destructor to orphan
        # tcp_try_rmem_schedule within sk_rcvbuf: sk_rmem_schedule's delta > 0, so __sk_mem_schedule,
        # which succeeds; __sk_mem_raise_allocated under tcp_mem[0] (no memcg: the static key off)
        "try_rmem": (0x5c, 0x90), "mem_schedule": (0x44,), "raise_allocated": (0x8c, 0xcc),
        # sock_rfree: sk_forward_alloc reaches a page: sk_mem_reclaim (__sk_mem_reclaim inlined);
        # __sk_mem_reduce_allocated not under memory pressure
        "rfree": (), "rfree_reclaim": (0x50,), "reduce_allocated": (0x70,),
        # inet_gro_receive of a segment merged into the held skb: a linear skb (frag0 empty, so the
        # header through skb_gro_header_slow's pskb_may_pull, which succeeds), IPv4 without options,
        # not a fragment, header checksum valid, the held skb of the same flow (DF, atomic IDs),
        # tcp4_gro_receive called (blr)
        "inet_gro": (0x40, 0x70, 0x1b4, 0x1cc),
        "tcp4_gro": (0x5c,),  # CHECKSUM_UNNECESSARY (the FEC's RX checksum): csum_cnt decremented
        # tcp_gro_receive: both headers through skb_gro_header_slow, the held skb's ports match,
        # nothing to flush (same ACK and options, in sequence, within the MSS), skb_gro_receive merges
        "tcp_gro": (0x44, 0x70, 0x25c, 0xc4),
        # skb_gro_receive: the segment's head is linear (headlen > offset) and a page fragment
        # (head_frag): stolen into the held skb's frags; no frag_list (lp == p)
        "skb_gro": (0xe0, 0x1dc),
        # ... the first segment of a merge, held: no skb in its bucket, so inet_gro_receive's loop over the
        # bucket (0x114) and tcp_gro_receive's (0x98) do not run, and there is nothing to flush (0x2b8)
        "inet_gro_held": (0x40, 0x70, 0x114), "tcp_gro_held": (0x44, 0x70, 0x25c, 0x98, 0x2b8),
        # tcp_event_data_recv: a GRO skb (gso_size), len >= rcv_mss, no PSH, the receiver RTT sample
        # not due (rcv_nxt before rtt_seq), ato set, ECN off, len >= 128: tcp_grow_window
        "event_data_recv": (0x48, 0x94, 0xe0, 0x160, 0x124),
        # tcp_grow_window: no room left (0x54) returns; else no memory pressure, tcp_event_data_recv's adjust
        # (0x7c) with linear data in the skb (0x150: truesize_adjust keeps the truesize), and check #2 passes
        # (incr = 2 * advmss) or fails (0xa4): __tcp_grow_window finds the increment at its first test (0x1b4
        # into the loop, 0x1dc back to the update), or none (rcv_ssthresh above tcp_rmem[2]'s window: no
        # pass of the loop), or halves truesize and window once more per pass (0x1d0)
        "grow_no_room": (0x54,), "grow_window": (0x7c, 0x150), "grow_scaled": (0x7c, 0x150, 0xa4, 0x1b4, 0x1dc),
        "grow_none": (0x7c, 0x150, 0xa4), "grow_halve": (0x7c, 0x150, 0xa4, 0x1b4, 0x1d0),
        # netif_receive_skb_list_internal of the one skb gro_normal_one flushed (a GRO skb is more than
        # gro_normal_batch segments): not deferred for an RX timestamp, no RPS, no pfmemalloc switch
        # in __netif_receive_skb_list, so __netif_receive_skb_list_core once
        "rx_list": (0x98, 0x174, 0x1e4, 0x234),
        # tcp_recvmsg: no control message, no inq hint asked; lock_sock_nested: the spinlock taken at once
        # (LL/SC), the socket not owned by user; release_sock: no backlog, tcp_release_cb, nobody
        # waiting on the lock
        "recvmsg": (0x94, 0xf8), "lock_sock": (0xc4, 0xd8), "release_sock": (0x104, 0x58, 0x94),
        # tcp_recvmsg_locked of a blocking read (no MSG_DONTWAIT / OOB / PEEK / WAITALL / TRUNC, no inq, no
        # repair, no urgent data): the queue's skb in sequence, copied whole, eaten (sock_rfree,
        # skb_attempt_defer_free); the walk counts one pass of the loop, then tcp_cleanup_rbuf
        "recvmsg_locked": (0x6c, 0x90, 0x338, 0xbc, 0x104, 0x14c, 0x11c, 0x260, 0x52c),
        # __netif_receive_skb_core: not pfmemalloc, no taps (ptype_all lists empty), no VLAN tag, no
        # rx_handler, ip_packet_type found in ptype_base (pt_prev set), no zerocopy frags
        "rx_core": (0xec, 0x708, 0x808, 0x100, 0x1f8, 0x30c, 0x3f4, 0x478, 0x524),
        # napi_gro_receive: GRO_MERGED_FREE with a stolen head (a build_skb / page_frag head)
        "gro_merge": (0x6c, 0x1f4),
        "gro_held": (0x74,),  # ... GRO_HELD: napi_skb_finish has nothing to do
        # dev_gro_receive: GRO on, no XDP prog; one held skb of the flow (Ethernet header compared, no
        # slow_gro); inet's gro_receive found; CHECKSUM_UNNECESSARY; no skb flushed; same flow; the
        # bucket's bit already set; linear skb, so no gro_pull_from_frag0
        "dev_gro": (0x5c, 0x104, 0x1c0, 0x20c, 0x324, 0x3bc, 0x3f0, 0x438, 0x9c),
        # ... an skb GRO passes up (UDP: udp4_gro_receive flushes it): no skb held, GRO_NORMAL, the
        # bucket's bit already clear
        "dev_gro_normal": (0x5c, 0x324, 0x3bc, 0x3f0, 0x440, 0x78, 0x90, 0x2c0),
        # ... the first segment of a merge: no skb held in its bucket (gro_list_prepare's loop not run), inet's
        # gro_receive returns no skb to complete, not the same flow, no flush, the bucket below MAX_GRO_SKBS:
        # listed and held (GRO_HELD), linear (no gro_pull_from_frag0), the bucket's bit set
        "dev_gro_held": (0x5c, 0x324, 0x3bc, 0x3f0, 0x78),
        # __ip_queue_xmit: the ACK skb has no dst yet (0x44): the socket's cached one (__sk_dst_check, a call) set
        # as a noref dst; no IP options (0xd8); IP_PMTUDISC_WANT (DF, MTU not locked), TCP's own inet_id (no
        # __ip_select_ident)
        "ip_xmit": (0x44, 0xd8, 0xa8, 0x10c, 0x204),
        # ip_finish_output2: no gateway (the client is on the link), the neighbour is cached (first in its
        # bucket: no __neigh_create), no pending confirm, NUD_CONNECTED with a cached header
        "ip_out2": (0x94, 0x344, 0x114),
        # __dev_queue_xmit: priority 0 and no priomap, not GSO, the noref dst dropped, a qdisc (the
        # lockless bypass of an empty pfifo_fast: sch_direct_xmit), no size table
        "dev_xmit": (0x88, 0xd0, 0x180, 0x1a4, 0x3d4),
        # validate_xmit_skb: no VLAN tag, no sk_validate_xmit_skb, not GSO, linear, CHECKSUM_PARTIAL
        # not encapsulated, the checksum offload helper succeeds
        "validate_xmit": (0x34, 0x108, 0x1a0, 0x210, 0x24c, 0x260),
        # skb_csum_hwoffload_help: not SCTP, no NETIF_F_HW_CSUM, NETIF_F_IP_CSUM (0x44), IPv4 (0xa0), the TCP
        # checksum's offset: left to the device (no skb_checksum_help)
        "csum_offload": (0x44, 0xa0),
        # sch_direct_xmit: a lockless qdisc (no root lock), validated, the TX lock taken at once
        "direct_xmit": (0x58, 0x14c, 0x200, 0x1e0, 0xbc),
        # dev_hard_start_xmit: no taps (dev_nit_active false); one pass of the loop, left at its test of the next
        # skb (0x4c: none)
        "hard_xmit": (0x6c, ("exit", 0x4c)),
        # __alloc_skb(GFP_ATOMIC) for an ACK: not fclone, not SKB_ALLOC_NAPI: kmem_cache_alloc_node
        "alloc_skb": (0x4c, 0x68, 0x160),
        "kmalloc_reserve": (0x6c,),  # the caller's address is a kernel address (bit 55 set)
    },
    "armhf": {
        "interrupt": (0x40,),
        "rx_napi": (0x328, 0x388, 0x39c, 0x6ac, 0x5a8, 0x718),
        "rx_error": (0x1ac,),
        "xdp_tx": ((0x294, 3), 0x6c4),  # mvneta_run_xdp's switch: XDP_TX; frame sent
        "xmit": (0x50,),
        "sync_cpu": (0x44, 0xbc), "sync_dev": (0x3c, 0xb8),
        "dev_to_cpu": (0x98,),  # less than a page: no PG_dcache_clean marking
        # dma_map/unmap_page_attrs: no dma_range_map; the sync branch unless DMA_ATTR_SKIP_CPU_SYNC
        "map": (0x108,), "map_skip": (), "unmap": (0x4c, 0x14c, 0x104, 0x11c), "unmap_skip": (0x4c,),
        "netdev_frag": (0x30, 0x94),  # __netdev_alloc_skb: a page_frag head, softirq context (irqs on)
        # the TCP receive path, steered as on arm64 (see there): header prediction, aligned timestamps,
        # PAWS, data, csum_valid, truesize within (or beyond: slow) sk_forward_alloc, ts not stored,
        # no tsecr to measure, noref dst, ack_seq == snd_una
        "rcv_est": (0x70, 0x344, 0x460, 0x500, 0x530, 0x72c, 0x540, 0x620, 0x680),
        "rcv_est_slow": (0x70, 0x344, 0x460, 0x500, 0x528, 0x1cc, 0x2bc),
        "ack_slow": (0xdc, 0x110, 0xdd4, 0x180, 0x220, 0x23c, 0x270, 0x2ac, 0xd70, 0xda4),
        "in_ack_event": (0x18,),  # bxeq lr: no in_ack_event callback
        "data_queue_in_order": (0x50, 0x3b0, 0xb4, 0x410, 0x428, 0x758, 0x760),
        "queue_rcv": (0x28, 0x110, 0x7c, 0x124),
        "try_rmem": (0x4c, 0x74), "mem_schedule": (), "raise_allocated": (0x88,),
        # sock_rfree: bxlt lr below a page; else the reclaim's tail call to __sk_mem_reduce_allocated,
        # which returns at popeq when not under memory pressure
        "rfree": (0x68,), "rfree_reclaim": (), "reduce_allocated": (0x68,),
        # GRO of a segment merged into its flow's held skb, as on arm64
        "inet_gro": (0x28, 0x64, 0x1d0), "tcp4_gro": (0x4c,), "tcp_gro": (0x2c, 0x5c, 0xac), "skb_gro": (0xd0, 0x184),
        "inet_gro_held": (0x28, 0x64, 0x11c), "tcp_gro_held": (0x2c, 0x5c, 0x7c, 0xf8),
        "event_data_recv": (0x9c, 0xfc, 0x188),  # ... ending in a tail call to tcp_grow_window
        "grow_no_room": (0x54,), "grow_window": (0x7c, 0x15c), "grow_scaled": (0x7c, 0x15c, 0x9c, 0x1b8),
        "grow_none": (0x7c, 0x15c, 0x9c), "grow_halve": (0x7c, 0x15c, 0x9c, 0x1b8, 0x1d4),
        # tcp_recvmsg_locked as on arm64: a read without MSG_WAITALL (0xa0: sock_rcvlowat), the queue's skb
        # (0x118) in sequence (0x168), data left in it (0x134), copied (0x2c0, 0x5cc: no error), eaten; one pass
        # of the loop, then tcp_cleanup_rbuf. tcp_recvmsg and lock_sock_nested: the layout is the modelled
        # path. release_sock: no backlog (0x24), nobody waiting (0x68). The socket spinlock is a call here
        # (_raw_spin_lock_bh: the ticket free at once, 0x3c)
        "recvmsg": (), "lock_sock": (), "release_sock": (0x24, 0x68), "spin_lock_bh": (0x3c,),
        "recvmsg_locked": (0xa0, 0x118, 0x168, 0x134, 0x2c0, 0x5cc),
        # netif_receive_skb_list_internal as on arm64: __netif_receive_skb_list's list not empty (0x14c), no
        # pfmemalloc switch (0x164), so __netif_receive_skb_list_core once
        "rx_list": (0x14c, 0x164),
        # napi_gro_receive as on arm64: GRO_MERGED_FREE (0x60) with a stolen head (0x1b8), or GRO_HELD, which
        # napi_skb_finish has nothing to do for (0x68)
        "gro_merge": (0x60, 0x1b8), "gro_held": (0x68,),
        # dev_gro_receive: no XDP prog (0x3c); one held skb of the flow (0xd4): the same hash, an
        # Ethernet header compared (0x180, the same), no slow_gro (0x1c8), the bucket's end (0x118); inet's
        # gro_receive found first in the offload list (0x2ec), CHECKSUM_UNNECESSARY (0x38c); no skb flushed
        # (0x3c0); same flow (0x408), so no pull; the bucket's bit already set
        "dev_gro": (0x3c, 0x180, 0x1c8, 0x118, 0x2ec, 0x38c, 0x3c0, 0x408),
        # ... the first segment of a merge: its bucket empty (0xd4), not the same flow, no flush, below
        # MAX_GRO_SKBS: listed and held, linear (0x5c), the bucket's bit set
        "dev_gro_held": (0x3c, 0xd4, 0x2ec, 0x38c, 0x3c0, 0x5c),
        # ... an skb GRO passes up at once: its bucket empty (0xd4), inet's gro_receive (0x2ec, 0x38c) returns
        # nothing to complete (0x3c0), not the same flow but flush set (0x414: UDP, a TCP PSH): GRO_NORMAL, linear
        # (0x5c), the bucket empty, so its bit is cleared if set (0x7c)
        "dev_gro_normal": (0x3c, 0xd4, 0x2ec, 0x38c, 0x3c0, 0x414, 0x5c, 0x7c),
        # __ip_queue_xmit: the ACK skb has no dst yet (0x34): the socket's cached one (__sk_dst_check, a call)
        # set as a noref dst; no IP options (0x2d0 falls through, 0xd8); IP_PMTUDISC_WANT (0x94), the MTU not
        # locked; a connected socket (0x114) that is TCP (0x2fc): its own inet_id, no __ip_select_ident
        "ip_xmit": (0x34, 0xd8, 0x94, 0x114, 0x2fc),
        # ip_finish_output2: no lwtunnel state (0x70), no gateway (0x8c: the client is on the link), the
        # neighbour first in its bucket (0x3f8), no pending confirm (0x110), NUD_CONNECTED with a cached header
        "ip_out2": (0x70, 0x8c, 0x3f8, 0x110),
        # __alloc_skb(GFP_ATOMIC) for an ACK: not SKB_ALLOC_NAPI (0x54), kmem_cache_alloc_node succeeds (0x138);
        # kmalloc_reserve: the layout is the modelled path
        "alloc_skb": (0x54, 0x138), "kmalloc_reserve": (),
        # __local_bh_enable_ip in process context (the socket spinlock's unlock): not in an interrupt (0x44),
        # no softirq pending (0xa0)
        "bh_enable_process": (0x44, 0xa0),
        # __dev_queue_xmit as on arm64: priority 0 and no priomap (0x7c), not GSO (0xcc), the noref dst
        # dropped (0x18c), txq picked, a qdisc (0x1a8) without a size table (0x2e8); __dev_xmit_skb (inlined):
        # the lockless pfifo_fast (TCQ_F_NOLOCK, CAN_BYPASS), empty, its seqlock taken at once; sch_direct_xmit
        # sent it and the qdisc is still empty (0x3d8); qdisc_run_end unlocks the seqlock (0x3ec), nothing
        # MISSED (0xaa4); rcu_read_unlock_bh
        "dev_xmit": (0x7c, 0xcc, 0x18c, 0x1a8, 0x2e8, 0x3d8, 0x3ec, 0xaa4),
        # validate_xmit_skb: no VLAN tag (0x30), a full socket without sk_validate_xmit_skb (0x1bc), not GSO
        # (0x10c), linear (0x234), CHECKSUM_PARTIAL not encapsulated, the checksum offload helper succeeds (0x2a8)
        "validate_xmit": (0x30, 0x1bc, 0x10c, 0x234, 0x2a8),
        "csum_offload": (0x6c,),  # skb_csum_hwoffload_help as on arm64: NETIF_F_IP_CSUM, IPv4 (0x6c), TCP's offset
        # sch_direct_xmit: no root lock (0x4c), validated (0x104), an skb (0x1ec), not LLTX: the TX lock (0x8c,
        # a call: _raw_spin_lock, the ticket free at once, 0x2c), the queue not stopped (0x134), unlocked (0xbc),
        # no root lock to retake (0xc4)
        "direct_xmit": (0x4c, 0x104, 0x1ec, 0x8c, 0x134, 0xbc, 0xc4), "spin_lock": (0x2c,),
        # dev_hard_start_xmit: no taps (0x84: ptype_all empty, then the device's), NETDEV_TX_OK (0xbc), the queue
        # not stopped; one pass of the loop, which leaves at its test of the next skb (0x64: none)
        "hard_xmit": (0x84, 0xbc, ("exit", 0x64)),
        # tcp_v4_rcv as on arm64: PACKET_HOST (0x78); a GRO skb, CHECKSUM_PARTIAL (0x144) with its start offset
        # valid: csum_valid set; no early-demux socket on the skb (0x1e4), so __inet_lookup finds the
        # established socket (0x414); not TIME_WAIT (0x218), not NEW_SYN_RECV (0x5f0); no xfrm policy, no secpath
        # (0xb4c), the default policy accepts (0xd58); the filter passes; the socket lock a call here
        # (_raw_spin_lock); not owned by the reader; refcounted: sock_put
        "v4_rcv": (0x78, 0x144, 0x1e4, 0x414, 0x218, 0x5f0, 0xb4c, 0xd58),
        # ... the socket early demux put on the skb (0x1e4 falls through: skb_steal_sock, not prefetched), no lookup
        "v4_rcv_demuxed": (0x78, 0x144, 0x218, 0x5f0, 0xb4c, 0xd58),
        # ip_rcv_finish and ip_rcv_finish_core as on arm64: no l3mdev (0x38); no hint (0x30), TCP (0x2ec), the
        # dst valid (0x4c), no NOPOLICY (0xfc)
        "rcv_finish_demuxed": (0x38,), "rcv_finish_core_demuxed": (0x30, 0x2ec, 0x4c, 0xfc),
        # tcp_v4_early_demux as on arm64: PACKET_HOST (0x24), the rest the layout; ipv4_dst_check returns the
        # dst at bxeq lr (0x28)
        "early_demux": (0x24,), "dst_check": (0x28,),
        # fec_enet_clear_csum as on arm64: CHECKSUM_PARTIAL (0x1c), not cloned (0x30), ETH_P_IP (0x58)
        "clear_csum": (0x1c, 0x30, 0x58),
        # tcp_v4_do_rcv: TCP_ESTABLISHED (0x1c), the skb's recorded RX queue (0x13c: fec records it), the rx dst
        # valid
        "v4_do_rcv": (0x1c, 0x13c),
        # __inet_lookup_established: the bucket's first entry has the hash (0x60) and matches, not bound to a
        # device (0xbc, 0x174 after the reference), refcount_inc_not_zero succeeds, the match re-checked (0x13c)
        "lookup_est": (0x60, 0xbc, 0x13c, 0x174),
        # __netif_receive_skb_core as on arm64: not pfmemalloc, so the taps (0xf8), whose ptype_all lists are
        # empty; not a pfmemalloc skb (0x114), no VLAN tag (0x1b8), no rx_handler (0x2c8); ip_packet_type, the
        # only entry of its ptype_base bucket, found with no earlier pt_prev (0x3ec); no ptype_specific (0x488);
        # no zerocopy frags (0x560)
        "rx_core": (0xf8, 0x114, 0x1b8, 0x2c8, 0x3ec, 0x488, 0x560),
    },
}
RX_NAPI = dict(take="rx_napi")
RX_ERROR = dict(take="rx_error")
XDP_TX = dict(take="xdp_tx")
XMIT = dict(take="xmit")
PKTGEN = dict(take="pktgen")
IRQ = [Part(V, "el1h_64_irq", follow=True), Part(V, "el1h_64_irq_handler"), Part(V, "el1_interrupt"),
       Part(V, "enter_from_kernel_mode"), Part(V, "irq_enter_rcu"), Part(V, "do_interrupt_handler"),
       Part(V, "call_on_irq_stack"), Part(V, "gic_handle_irq", pick="irq-gic-v3.c"), Part(V, "generic_handle_domain_irq"),
       Part(V, "__irq_resolve_mapping"), Part(V, "handle_fasteoi_irq"), Part(V, "handle_irq_event"),
       Part(V, "__handle_irq_event_percpu"), Part(V, "irq_exit_rcu"), Part(V, "__irq_exit_rcu"),
       Part(V, "exit_to_kernel_mode.isra.0")]
SYNC_DEV, SYNC_CPU = ("arch_sync_dma_for_device",), ("arch_sync_dma_for_cpu",)
# swiotlb_release_slots' second loop (the free slots before the released one, back to the segment's
# start): its body and its test, walked once by the "release" take
RELEASE_MERGE = ((0x140, 0x158), (0x160, 0x170))
PP_SYNC, PP_MAP_CALLS = ("dma_sync_single_for_device",), ("dma_map_page_attrs", "dma_sync_single_for_device")
RELEASE_HEAD = dict(take="release_head", avoid=("nf_conntrack_destroy", "__skb_ext_put"))
# netif_receive_skb_list_internal: the offsets of one skb's pass of the timestamp loop (skb_list_del_init,
# skb_defer_rx_timestamp, list_add_tail) and of __netif_receive_skb_list's pfmemalloc loop (`skb`), and
# what a further skb of the list runs to get back to each loop's head (`back`). armhf rotates the
# timestamp loop: its head's move (0x68) is on the walk, so the per-list part skips it too.
RX_LIST = {"arm64": dict(skb=((0x68, 0x98), (0xd4, 0x10c), (0x168, 0x174), (0x1d4, 0x1e4)),
                         back=((0xb0, 0xb4), (0x1e8, 0x1ec)), back_on_walk=()),
           "armhf": dict(skb=((0x54, 0x64), (0x6c, 0xc8), (0x158, 0x164), (0x1d0, 0x1e0)),
                         back=((0x68, 0x68), (0x154, 0x154)), back_on_walk=((0x68, 0x68),))}
# tcp_grow_window: truesize_adjust's test of the skb's linear data, run when the caller asks to adjust
GROW_ADJUST = {"arm64": ((0x148, 0x150),), "armhf": ((0x154, 0x15c),)}
SKB_LINES = (1709, 1776)  # fec_enet_rx_queue: build_skb .. napi_gro_receive (the firmware's fec_enet_rx_skb)


def rx_list_keys(spans):
    """netif_receive_skb_list_internal per list, per skb (with __netif_receive_skb_core) and per further skb;
    `spans`: an RX_LIST entry."""
    return {
        "netif_receive_skb_list_internal": dict(
            parts=[Part(V, "netif_receive_skb_list_internal", take="rx_list", label="per list",
                        not_offsets=spans["skb"] + spans["back_on_walk"], need=("__netif_receive_skb_list_core",))],
            note="per list gro_normal_list passes up: netif_receive_skb_list_internal without its two per-skb loops "
                 "(no RPS, no pfmemalloc switch: __netif_receive_skb_list_core once)"),
        "netif_receive_skb_core": dict(
            parts=[Part(V, "netif_receive_skb_list_internal", take="rx_list", offsets=spans["skb"], label="per skb",
                        need=("skb_defer_rx_timestamp",)),
                   Part(V, "__netif_receive_skb_core.constprop.0", take="rx_core", avoid=("kfree_skb_reason",))],
            note="per skb of the list: an iteration of netif_receive_skb_list_internal's timestamp loop and of "
                 "__netif_receive_skb_list's pfmemalloc loop; the skb delivered to ip_packet_type: no taps, no "
                 "rx_handler, no VLAN"),
        "netif_receive_skb_list_next": dict(
            parts=[Part(V, "netif_receive_skb_list_internal", take="rx_list", back=spans["back"],
                        label="per further skb")],
            note="per skb after the first of a list: what netif_receive_skb_list_internal's two per-skb loops "
                 "run to get back to their heads"),
    }


def grow_window_keys(adjust):
    """tcp_grow_window by branch; `adjust`: the offsets of truesize_adjust's test (charged apart)."""
    return {
        "tcp_grow_window": dict(parts=[Part(V, "tcp_grow_window", take="grow_window", not_offsets=adjust,
                                            label="without the adjust test")],
                                note="room left, no memory pressure, the truesize test (check #2) passes: "
                                     "rcv_ssthresh raised by max(2 * advmss, 2 * len) within the room"),
        "tcp_grow_window_no_room": dict(parts=[Part(V, "tcp_grow_window", take="grow_no_room")],
                                        note="no room: min(window_clamp, tcp_space) is not above rcv_ssthresh"),
        "tcp_grow_window_scaled": dict(parts=[Part(V, "tcp_grow_window", take="grow_scaled", not_offsets=adjust,
                                                   label="without the adjust test")],
                                       note="room left, the truesize test fails: __tcp_grow_window (inlined) finds "
                                            "the increment, 2 * rcv_mss, at its first test; rcv_ssthresh raised"),
        "tcp_grow_window_none": dict(parts=[Part(V, "tcp_grow_window", take="grow_none", not_offsets=adjust,
                                                 label="without the adjust test")],
                                     note="room left, the truesize test fails, and __tcp_grow_window (inlined) finds "
                                          "no increment: rcv_ssthresh is above half tcp_rmem[2]'s window"),
        "tcp_grow_window_halve": dict(parts=[Part(V, "tcp_grow_window", take="grow_halve", loop="body")],
                                      note="a further pass of __tcp_grow_window's loop: truesize and window halved"),
        "tcp_grow_window_adjust": dict(parts=[Part(V, "tcp_grow_window", take="grow_window", offsets=adjust,
                                                   label="the adjust test")],
                                       note="truesize_adjust's test when the caller adjusts (tcp_event_data_recv): "
                                            "the skb has linear data, the truesize is kept"),
    }


SPEC = {
    "generic_handle_irq": dict(parts=IRQ, note="EL1 IRQ vector entry/exit, GICv3 acknowledge/EOI, irq domain lookup, fasteoi flow, action dispatch"),
    "fec_enet_interrupt": dict(parts=[Part(F, "fec_enet_interrupt", take="interrupt")]),
    "fec_enet_collect_events": dict(parts=[Part(F, "fec_enet_interrupt", "fec_enet_collect_events", take="interrupt")]),
    "napi_schedule": dict(parts=[Part(V, "napi_schedule_prep"), Part(V, "__napi_schedule")]),
    "net_rx_action": dict(parts=[Part(V, "net_rx_action", loop="call"), Part(V, "__napi_poll"), Part(V, "__do_softirq")]),
    "fec_enet_rx_napi": dict(parts=[Part(F, "fec_enet_rx_napi", **RX_NAPI)]),
    "napi_complete_done": dict(parts=[Part(V, "napi_complete_done")]),
    "fec_enet_rx": dict(parts=[Part(F, "fec_enet_rx_napi", "fec_enet_rx", loop="call", **RX_NAPI)]),
    "fec_enet_rx_queue": dict(parts=[Part(F, "fec_enet_rx_napi", "fec_enet_rx_queue", loop="call", **RX_NAPI),
                                     Part(F, "fec_enet_rx_napi", "fec_enet_rx", loop="body", **RX_NAPI)]),
    "fec_enet_rx_queue_bd": dict(parts=[Part(F, "fec_enet_rx_napi", "fec_enet_rx_queue", loop="body",
                                             not_lines=SKB_LINES, **RX_NAPI)]),
    "fec_enet_rx_error": dict(parts=[Part(F, "fec_enet_rx_napi", "fec_enet_rx_queue", lines=(1661, 1681), **RX_ERROR)]),
    "fec_enet_update_cbd": dict(parts=[Part(F, "fec_enet_rx_napi", "fec_enet_update_cbd", **RX_NAPI)]),
    "fec_enet_tx": dict(parts=[Part(F, "fec_enet_rx_napi", "fec_enet_tx", loop="call", **RX_NAPI)]),
    "fec_enet_tx_queue": dict(parts=[Part(F, "fec_enet_rx_napi", "fec_enet_tx_queue", loop="call", **RX_NAPI),
                                     Part(F, "fec_enet_rx_napi", "fec_enet_tx", loop="body", **RX_NAPI)]),
    "fec_enet_tx_queue_bd": dict(parts=[Part(F, "fec_enet_rx_napi", "fec_enet_tx_queue", loop="body", **RX_NAPI)],
                                 note="6.1 completes skbs only (dev_kfree_skb_any); the XDP frame types are v6.6"),
    "dma_sync_single": dict(mean=True, parts=[
        Part(V, "dma_sync_single_for_cpu", take="sync_cpu", group="cpu"), Part(V, "arch_sync_dma_for_cpu", group="cpu"),
        Part(V, "dma_sync_single_for_device", take="sync_dev", group="dev"),
        Part(V, "arch_sync_dma_for_device", group="dev")],
        note="mean of the sync for the CPU and for the device: the DMA API, dma-direct (inlined; no "
             "dma_range_map, non-coherent device) and the arch_sync_dma_* wrapper around the cache routine"),
    "dma_map_single": dict(parts=[Part(V, "dma_map_page_attrs", take="map", need=SYNC_DEV),
                                  Part(V, "arch_sync_dma_for_device")],
                           note="a streaming map: dma_map_page_attrs (dma-direct inlined) calling "
                                "arch_sync_dma_for_device around the clean"),
    "dma_map_single_skip_sync": dict(parts=[Part(V, "dma_map_page_attrs", take="map_skip", avoid=SYNC_DEV)],
                                     note="page_pool's map (DMA_ATTR_SKIP_CPU_SYNC): dma_map_page_attrs "
                                          "returning the address without a sync"),
    "dma_unmap_single": dict(parts=[Part(V, "dma_unmap_page_attrs", take="unmap", need=SYNC_CPU),
                                    Part(V, "arch_sync_dma_for_cpu", take="unmap_arch")],
                             note="a streaming unmap of a buffer the CPU wrote (DMA_TO_DEVICE: TX completion): "
                                  "dma_unmap_page_attrs (dma-direct inlined) calling arch_sync_dma_for_cpu, which "
                                  "returns at once"),
    "dma_unmap_single_from_device": dict(parts=[Part(V, "dma_unmap_page_attrs", take="unmap", need=SYNC_CPU),
                                                Part(V, "arch_sync_dma_for_cpu")],
                                         note="a streaming unmap of a buffer the device wrote (the legacy RX "
                                              "buffers): arch_sync_dma_for_cpu calls the invalidate"),
    "dma_unmap_single_skip_sync": dict(parts=[Part(V, "dma_unmap_page_attrs", take="unmap_skip", avoid=SYNC_CPU)],
                                       note="page_pool's unmap (DMA_ATTR_SKIP_CPU_SYNC): dma_unmap_page_attrs "
                                            "without a sync"),
    "swiotlb_map": dict(parts=[Part(V, "swiotlb_map", take="swiotlb_map"),
                               Part(V, "swiotlb_tbl_map_single", take="tbl_map")],
                        note="swiotlb_map and swiotlb_tbl_map_single: a free slot of the area found, the slots' "
                             "records written (the bounce and the clean charge their own keys)"),
    "swiotlb_unmap": dict(parts=[Part(V, "swiotlb_tbl_unmap_single", take="tbl_unmap"),
                                 Part(V, "swiotlb_release_slots.isra.0", take="release", not_offsets=RELEASE_MERGE[:1],
                                      label="without the merge loop's body")],
                          note="swiotlb_tbl_unmap_single with DMA_ATTR_SKIP_CPU_SYNC (no copy) and "
                               "swiotlb_release_slots around its loop over the free slots before the released one"),
    "swiotlb_release_merge": dict(parts=[Part(V, "swiotlb_release_slots.isra.0", take="release", offsets=RELEASE_MERGE,
                                              label="the merge loop")],
                                  note="one pass of swiotlb_release_slots' second loop: a free slot before the "
                                       "released one joins its free run"),
    "swiotlb_sync_single": dict(mean=True, parts=[Part(V, "swiotlb_sync_single_for_cpu", take="swiotlb_sync_cpu",
                                                       group="cpu"),
                                                  Part(V, "swiotlb_sync_single_for_device", group="dev")],
                                note="mean of swiotlb_sync_single_for_cpu (calls the bounce) and _for_device "
                                     "(DMA_FROM_DEVICE: returns)"),
    "swiotlb_bounce": dict(parts=[Part(V, "swiotlb_bounce", take="bounce"),
                                  Part(V, "__memcpy", loop="call", take="memcpy_large")],
                           note="swiotlb_bounce and __memcpy around its 64-byte loop"),
    "swiotlb_bounce_line": dict(parts=[Part(V, "__memcpy", loop="body", take="memcpy_large")],
                                note="one 64-byte iteration of __memcpy's loop (the core charges the loads and stores)"),
    "dcache_by_line_op": dict(mean=True, parts=[Part(V, "dcache_clean_poc", loop="call"), Part(V, "dcache_inval_poc", loop="call", rotated=True)],
                              note="mean of the clean and invalidate routines (arch/arm64/mm/cache.S) around the line loop"),
    "dcache_by_line_iter": dict(mean=True, parts=[Part(V, "dcache_clean_poc", loop="body"), Part(V, "dcache_inval_poc", loop="body", rotated=True)],
                                note="the dcache_by_line_op loop without the DC instruction (charged by the core)"),
    "outer_cache_range": dict(zero="arm64 has no outer (L2 controller) cache maintenance"),
    "outer_cache_line": dict(zero="arm64 has no outer (L2 controller) cache maintenance"),
    "alloc_pages": dict(parts=[Part(V, "__alloc_pages"), Part(V, "get_page_from_freelist")]),
    "free_pages": dict(parts=[Part(V, "__free_pages"), Part(V, "free_unref_page"), Part(V, "free_unref_page_commit")]),
    "prep_compound_page": dict(parts=[Part(V, "prep_compound_page", loop="call")]),
    "prep_compound_tail": dict(parts=[Part(V, "prep_compound_page", loop="body")]),
    "kmem_cache_alloc": dict(parts=[Part(V, "kmem_cache_alloc")]),
    "kmem_cache_free": dict(parts=[Part(V, "kmem_cache_free")]),
    "page_frag_alloc": dict(parts=[Part(V, "page_frag_alloc_align")]),
    "page_frag_free": dict(parts=[Part(V, "page_frag_free", take="frag_put")],
                           note="page_frag_free while other frags hold the page (its free is charged by free_pages)"),
    "page_pool_alloc_fast": dict(parts=[Part(V, "page_pool_alloc_pages")]),
    "page_pool_refill": dict(parts=[Part(V, "page_pool_refill_alloc_cache", loop="call", take="pp_refill")]),
    "page_pool_refill_page": dict(parts=[Part(V, "page_pool_refill_alloc_cache", loop="body", take="pp_refill")]),
    "page_pool_alloc_slow": dict(parts=[Part(V, "__page_pool_alloc_pages_slow", loop="call", take="pp_slow")]),
    "page_pool_alloc_slow_page": dict(parts=[Part(V, "__page_pool_alloc_pages_slow", loop="body", take="pp_slow")],
                                      note="per page of the bulk refill: page_pool_dma_map's call (charged apart), "
                                           "pp_magic and pp set, the alloc cache entry"),
    "page_pool_dma_map": dict(parts=[Part(V, "page_pool_dma_map", take="pp_dma_map", need=PP_MAP_CALLS)],
                              note="page_pool_dma_map: the map call (dma_map_page_attrs, charged apart), the "
                                   "address stored in the page, the PP_FLAG_DMA_SYNC_DEV sync call"),
    "page_pool_put_page": dict(parts=[Part(V, "page_pool_put_defragged_page", take="put_direct", need=PP_SYNC)],
                               note="page_pool_put_defragged_page, PP_FLAG_DMA_SYNC_DEV, allow_direct: recycled "
                                    "into the alloc cache"),
    "page_pool_put_page_ring": dict(parts=[Part(V, "page_pool_put_defragged_page", take="put_ring", need=PP_SYNC)],
                                    note="page_pool_put_defragged_page, PP_FLAG_DMA_SYNC_DEV, not direct (an skb's "
                                         "page): around page_pool_recycle_in_ring, charged apart"),
    "page_pool_recycle_ring": dict(parts=[Part(V, "page_pool_put_defragged_page", "page_pool_recycle_in_ring")]),
    "page_pool_return_page": dict(parts=[Part(V, "page_pool_release_page")]),
    "bpf_prog_run_xdp": dict(parts=[Part(M, "mvneta_rx_swbm", "bpf_prog_run_xdp", **XDP_TX)],
                             note="inlined bpf_prog_run_xdp + the dispatcher call, from mvneta_rx_swbm"),
    "fec_enet_run_xdp": dict(derived="mvneta_run_xdp (6.1 mvneta, XDP_TX case)",
                             parts=[Part(M, "mvneta_rx_swbm", "mvneta_run_xdp", **XDP_TX)]),
    "xdp_convert_buff_to_frame": dict(parts=[Part(M, "mvneta_rx_swbm", "xdp_convert_buff_to_frame", **XDP_TX)]),
    "xdp_return_frame_rx_napi": dict(parts=[Part(V, "xdp_return_frame_rx_napi"), Part(V, "__xdp_return", take="xdp_return_pp")],
                                     note="xdp_return_frame_rx_napi + __xdp_return for MEM_TYPE_PAGE_POOL"),
    "xdp_do_redirect": dict(parts=[Part(V, "xdp_do_redirect")]),
    "bq_enqueue": dict(parts=[Part(V, "dev_map_enqueue"), Part(V, "bq_enqueue")]),
    "xdp_do_flush": dict(parts=[Part(V, "xdp_do_flush"), Part(V, "__dev_flush", loop="call"),
                                Part(V, "__cpu_map_flush", take="list_empty"), Part(V, "__xsk_map_flush", take="list_empty")],
                         note="xdp_do_flush and the devmap, cpumap (empty) and xskmap (empty) flush lists"),
    "bq_xmit_all": dict(parts=[Part(V, "bq_xmit_all")]),
    "fec_enet_xdp_tx_xmit": dict(derived="mvneta_xdp_xmit_back (6.1 mvneta)",
                                 parts=[Part(M, "mvneta_rx_swbm", "mvneta_xdp_xmit_back", not_lines=(2193, 2193), **XDP_TX)],
                                 note="XDP_TX: frame conversion call, queue pick, xmit lock, stats, unlock; without "
                                      "mvneta's doorbell (fec_txq_trigger_xmit)"),
    "fec_enet_txq_xmit_frame": dict(derived="mvneta_xdp_submit_frame (6.1 mvneta)",
                                    parts=[Part(M, "mvneta_xdp_submit_frame.isra.0")]),
    "fec_enet_xdp_xmit": dict(derived="mvneta_xdp_xmit (6.1 mvneta), without the per-frame submit",
                              parts=[Part(M, "mvneta_xdp_xmit", loop="call")]),
    "fec_txq_trigger_xmit": dict(derived="the TDAR doorbell of 6.1 fec_enet_txq_submit_skb",
                                 parts=[Part(F, "fec_enet_start_xmit", "fec_enet_txq_submit_skb", lines=(695, 700), **XMIT)]),
    "build_skb": dict(parts=[Part(V, "build_skb"), Part(V, "__build_skb_around")]),
    "fec_enet_rx_skb": dict(parts=[Part(F, "fec_enet_rx_napi", "fec_enet_rx_queue", lines=SKB_LINES, **RX_NAPI)],
                            note="the skb half of 6.1 fec_enet_rx_queue: build_skb .. napi_gro_receive"),
    "napi_gro_receive": dict(parts=[Part(V, "napi_gro_receive", take="gro_merge", need=("napi_skb_free_stolen_head",)),
                                    Part(V, "dev_gro_receive", take="dev_gro", avoid=("gro_pull_from_frag0",))],
                             note="a segment merged into the held skb of its flow: dev_gro_receive (inet's gro_receive "
                                  "charged apart), the stolen head's sk_buff freed"),
    "napi_gro_receive_held": dict(parts=[Part(V, "napi_gro_receive", take="gro_held",
                                              avoid=("napi_skb_free_stolen_head", "__list_add_valid")),
                                         Part(V, "dev_gro_receive", take="dev_gro_held", need=("__list_add_valid",),
                                              avoid=("gro_pull_from_frag0", "napi_gro_complete.constprop.0"))],
                                  note="the first segment of a merge, held in its bucket (GRO_HELD): dev_gro_receive "
                                       "(inet's gro_receive charged apart) lists it"),
    "napi_gro_receive_normal": dict(parts=[Part(V, "napi_gro_receive", need=("__list_add_valid",)),
                                           Part(V, "dev_gro_receive", take="dev_gro_normal",
                                                avoid=("gro_pull_from_frag0", "napi_gro_complete.constprop.0"))],
                                    note="an skb GRO passes up at once (GRO_NORMAL: UDP, no UDP GRO socket): "
                                         "dev_gro_receive calls inet's gro_receive, which flushes it; "
                                         "gro_normal_one queues it for the batch"),
    **rx_list_keys(RX_LIST["arm64"]),
    "do_xdp_generic": dict(parts=[Part(V, "do_xdp_generic"), Part(V, "bpf_prog_run_generic_xdp", loop="call")]),
    "ip_rcv": dict(parts=[Part(V, "ip_rcv"), Part(V, "ip_rcv_core")]),
    "ip_rcv_finish": dict(parts=[Part(V, "ip_rcv_finish"), Part(V, "ip_rcv_finish_core.constprop.0")]),
    "ip_rcv_finish_demuxed": dict(parts=[Part(V, "ip_rcv_finish", take="rcv_finish_demuxed",
                                              need=("ip_rcv_finish_core.constprop.0",)),
                                         Part(V, "ip_rcv_finish_core.constprop.0", take="rcv_finish_core_demuxed",
                                              need=("tcp_v4_early_demux",),
                                              avoid=("ip_route_input_noref", "ip_route_use_hint", "udp_v4_early_demux"))],
                                  note="ip_rcv_finish of a TCP segment early demux gave its socket's input route: "
                                       "no route lookup (tcp_v4_early_demux charged apart)"),
    "ip_local_deliver": dict(parts=[Part(V, "ip_local_deliver", take="ip_local", avoid=("ip_defrag",)),
                                    Part(V, "ip_local_deliver_finish"),
                                    Part(V, "ip_protocol_deliver_rcu", take="ip_proto", avoid=("nf_conntrack_destroy",))]),
    "udp_rcv": dict(parts=[Part(V, "udp_rcv"), Part(V, "__udp4_lib_rcv")]),
    "udp_queue_rcv_skb": dict(parts=[Part(V, "udp_queue_rcv_skb"), Part(V, "udp_queue_rcv_one_skb"), Part(V, "__udp_enqueue_schedule_skb")]),
    "sock_def_readable": dict(parts=[Part(V, "sock_def_readable")]),
    "udp_recvmsg": dict(parts=[Part(V, "udp_recvmsg")]),
    "kfree_skb": dict(parts=[Part(V, "kfree_skb_reason"), Part(V, "skb_release_head_state", **RELEASE_HEAD),
                             Part(V, "skb_release_data"), Part(V, "kfree_skbmem")]),
    "napi_consume_skb": dict(parts=[Part(V, "napi_consume_skb"), Part(V, "skb_release_head_state", **RELEASE_HEAD),
                                    Part(V, "skb_release_data")]),
    "skb_free_head_pp": dict(parts=[Part(V, "page_pool_return_skb_page")]),
    "generic_xdp_tx": dict(parts=[Part(V, "generic_xdp_tx")]),
    "netdev_alloc_skb": dict(parts=[Part(V, "__netdev_alloc_skb", take="netdev_frag"), Part(V, "__local_bh_enable_ip"),
                                    Part(V, "__build_skb"), Part(V, "__build_skb_around")],
                             note="__netdev_alloc_skb's page_frag branch in softirq context (local_bh_enable, "
                                  "__build_skb around the frag; page_frag_alloc and kmem_cache_alloc are their own keys)"),
    "netdev_alloc_skb_kmalloc": dict(parts=[Part(V, "__netdev_alloc_skb")],
                                     note="__netdev_alloc_skb's kmalloc branch (small heads) around __alloc_skb"),
    "fec_enet_copybreak": dict(estimate="the copybreak RX path is gone in 6.1 (page_pool since 6.1)"),
    "fec_enet_new_rxbdp": dict(estimate="the copybreak RX path is gone in 6.1 (page_pool since 6.1)"),
    "fec_enet_start_xmit": dict(parts=[Part(F, "fec_enet_start_xmit", "fec_enet_start_xmit", **XMIT)]),
    # not the tx_bounce copy (unaligned data or SWAP_FRAME, neither on the modelled SoCs)
    "fec_enet_txq_submit_skb": dict(parts=[Part(F, "fec_enet_start_xmit", "fec_enet_txq_submit_skb", not_lines=(695, 700),
                                                avoid=("memcpy", "swap_buffer"), **XMIT)]),
    "fec_enet_txq_submit_skb_csum": dict(parts=[Part(F, "fec_enet_start_xmit", "fec_enet_txq_submit_skb", not_lines=(695, 700),
                                                     avoid=("memcpy", "swap_buffer"), need=("fec_enet_clear_csum.constprop.0",),
                                                     **XMIT),
                                                Part(F, "fec_enet_clear_csum.constprop.0", take="clear_csum",
                                                     avoid=("pskb_expand_head",))],
                                         note="fec_enet_txq_submit_skb of a CHECKSUM_PARTIAL skb (the stack's TCP): "
                                              "fec_enet_clear_csum zeroes the IPv4 and TCP checksums, PINS | IINS set"),
    "fec_enet_txq_submit_frag": dict(parts=[Part(F, "fec_enet_start_xmit", "fec_enet_txq_submit_frag_skb", loop="body", take="xmit_frags")]),
    # TCP receive path (net/ipv4/tcp_input.c, tcp_output.c, tcp.c, tcp_offload.c, net/core/gro.c)
    "inet_gro_receive": dict(parts=[Part(V, "inet_gro_receive", take="inet_gro", avoid=("__pskb_pull_tail",)),
                                    Part(V, "tcp4_gro_receive", take="tcp4_gro",
                                         avoid=("csum_tcpudp_nofold", "__skb_gro_checksum_complete"),
                                         need=("tcp_gro_receive",)),
                                    Part(V, "tcp_gro_receive", take="tcp_gro", need=("skb_gro_receive",),
                                         avoid=("__pskb_pull_tail",)),
                                    Part(V, "skb_gro_receive", take="skb_gro")],
                             note="per segment: the IPv4 and TCP GRO callbacks and the merge into the held skb"),
    "inet_gro_receive_held": dict(parts=[Part(V, "inet_gro_receive", take="inet_gro_held", avoid=("__pskb_pull_tail",)),
                                         Part(V, "tcp4_gro_receive", take="tcp4_gro",
                                              avoid=("csum_tcpudp_nofold", "__skb_gro_checksum_complete"),
                                              need=("tcp_gro_receive",)),
                                         Part(V, "tcp_gro_receive", take="tcp_gro_held",
                                              avoid=("skb_gro_receive", "__pskb_pull_tail"))],
                                  note="the first segment of a merge: the IPv4 and TCP GRO callbacks find no skb of "
                                       "the flow to merge into"),
    "napi_gro_complete": dict(parts=[Part(V, "napi_gro_complete.constprop.0"), Part(V, "inet_gro_complete"),
                                     Part(V, "tcp4_gro_complete"), Part(V, "tcp_gro_complete")]),
    "tcp_v4_rcv": dict(parts=[Part(V, "tcp_v4_rcv", take="v4_rcv", need=("tcp_v4_do_rcv",), avoid=("kfree_skb_reason",)),
                              Part(V, "__inet_lookup_established", take="lookup_est", avoid=("sock_gen_put",)),
                              Part(V, "tcp_v4_do_rcv", take="v4_do_rcv", need=("tcp_rcv_established",),
                                   avoid=("kfree_skb_reason",))],
                       note="an established segment: checksum already valid, socket lookup, not TIME_WAIT, "
                            "tcp_v4_do_rcv's established fast path"),
    "tcp_v4_rcv_demuxed": dict(parts=[Part(V, "tcp_v4_rcv", take="v4_rcv_demuxed", need=("tcp_v4_do_rcv",),
                                           avoid=("kfree_skb_reason", "__inet_lookup_established")),
                                      Part(V, "tcp_v4_do_rcv", take="v4_do_rcv", need=("tcp_rcv_established",),
                                           avoid=("kfree_skb_reason",))],
                               note="an established segment with the socket early demux found (skb_steal_sock: no "
                                    "lookup), tcp_v4_do_rcv's established fast path"),
    "tcp_v4_early_demux": dict(parts=[Part(V, "tcp_v4_early_demux", take="early_demux",
                                           need=("__inet_lookup_established",), avoid=("__pskb_pull_tail",)),
                                      Part(V, "__inet_lookup_established", take="lookup_est", avoid=("sock_gen_put",)),
                                      Part(V, "ipv4_dst_check", take="dst_check")],
                               note="the established socket's lookup, its cached input route checked (ipv4_dst_check) "
                                    "and set on the skb"),
    "tcp_rcv_established": dict(parts=[Part(V, "tcp_rcv_established", take="rcv_est",
                                            need=("tcp_queue_rcv", "tcp_event_data_recv"), avoid=("kfree_skb_reason",))],
                                note="the header-prediction fast path of an in-order data segment whose truesize fits "
                                     "sk_forward_alloc (tcp_queue_rcv and tcp_event_data_recv charged apart)"),
    "tcp_rcv_established_slow": dict(parts=[Part(V, "tcp_rcv_established", take="rcv_est_slow",
                                                 need=("tcp_ack", "tcp_urg", "tcp_data_queue", "tcp_check_space"),
                                                 avoid=("kfree_skb_reason", "tcp_queue_rcv")),
                                            Part(V, "tcp_ack", take="ack_slow",
                                                 avoid=("tcp_sacktag_write_queue", "tcp_fastretrans_alert", "rb_first")),
                                            Part(V, "tcp_in_ack_event", take="in_ack_event"), Part(V, "tcp_urg"), Part(V, "tcp_check_space")],
                                     note="header prediction passes but the truesize exceeds sk_forward_alloc: step5, "
                                          "tcp_ack's slow path with nothing in flight, tcp_urg, tcp_check_space "
                                          "(tcp_data_queue charged apart)"),
    "tcp_data_queue": dict(parts=[Part(V, "tcp_data_queue")],
                           note="the slow path's queueing decision (in order after a hole, duplicates, partial data)"),
    "tcp_data_queue_in_order": dict(parts=[Part(V, "tcp_data_queue", take="data_queue_in_order",
                                                need=("tcp_try_rmem_schedule", "tcp_queue_rcv", "tcp_event_data_recv",
                                                      "tcp_data_ready"),
                                                avoid=("kfree_skb_partial", "tcp_fin", "__kfree_skb"))],
                                    note="tcp_data_queue's in-order branch (queue_and_out; the memory schedule, "
                                         "tcp_queue_rcv and tcp_event_data_recv charged apart)"),
    "tcp_queue_rcv": dict(parts=[Part(V, "tcp_queue_rcv", take="queue_rcv", need=("tcp_try_coalesce",))],
                          note="not coalesced into the queue's tail: __skb_queue_tail, skb_set_owner_r (the charge)"),
    "tcp_event_data_recv": dict(parts=[Part(V, "tcp_event_data_recv", take="event_data_recv", need=("tcp_grow_window",),
                                            avoid=("__tcp_ecn_check_ce", "tcp_incr_quickack"))],
                                note="a GRO skb of full segments, the RTT sample not due, the delayed-ACK timeout "
                                     "updated, tcp_grow_window called (charged apart)"),
    **grow_window_keys(GROW_ADJUST["arm64"]),
    "sk_mem_schedule": dict(parts=[Part(V, "tcp_try_rmem_schedule", take="try_rmem", need=("__sk_mem_schedule",)),
                                   Part(V, "__sk_mem_schedule", take="mem_schedule"),
                                   Part(V, "__sk_mem_raise_allocated", take="raise_allocated",
                                        avoid=("mem_cgroup_charge_skmem", "proto_memory_pcpu_drain"))],
                            note="tcp_try_rmem_schedule within sk_rcvbuf raising sk_forward_alloc by whole pages: "
                                 "__sk_mem_schedule, __sk_mem_raise_allocated under tcp_mem[0]"),
    "sk_forced_mem_schedule": dict(parts=[Part(V, "sk_forced_mem_schedule",
                                               avoid=("mem_cgroup_charge_skmem", "proto_memory_pcpu_drain"))],
                                   note="the first skb of an empty receive queue: sk_forward_alloc raised by whole pages"),
    "sock_rfree": dict(parts=[Part(V, "sock_rfree", take="rfree", avoid=("__sk_mem_reduce_allocated",))],
                       note="the reader's uncharge (sk_rmem_alloc, sk_forward_alloc) below a page: no reclaim"),
    "sock_rfree_reclaim": dict(parts=[Part(V, "sock_rfree", take="rfree_reclaim", need=("__sk_mem_reduce_allocated",)),
                                      Part(V, "__sk_mem_reduce_allocated", take="reduce_allocated",
                                           avoid=("proto_memory_pcpu_drain", "mem_cgroup_uncharge_skmem"))],
                               note="the reader's uncharge with sk_mem_reclaim: whole pages of sk_forward_alloc back "
                                    "to tcp_memory_allocated (__sk_mem_reclaim inlined, __sk_mem_reduce_allocated)"),
    "tcp_ofo_queue": dict(estimate="tcp_data_queue_ofo and tcp_ofo_queue are inlined into tcp_data_queue, off its likely path"),
    "tcp_ack_snd_check": dict(parts=[Part(V, "__tcp_ack_snd_check"), Part(V, "tcp_send_delayed_ack")]),
    "tcp_send_ack": dict(parts=[Part(V, "__tcp_send_ack.part.0"), Part(V, "__tcp_transmit_skb"), Part(V, "tcp_options_write"),
                                Part(V, "tcp_v4_send_check")],
                         note="__tcp_send_ack (alloc_skb charged apart), __tcp_transmit_skb with the window selection "
                              "and options, the checksum setup"),
    "alloc_skb": dict(parts=[Part(V, "__alloc_skb", take="alloc_skb", need=("kmem_cache_alloc_node",),
                                  avoid=("napi_skb_cache_get",)),
                             Part(V, "kmalloc_reserve", take="kmalloc_reserve")],
                      note="__alloc_skb(GFP_ATOMIC) without SKB_ALLOC_NAPI (an ACK): the head cache, kmalloc_reserve"),
    "ip_queue_xmit": dict(parts=[Part(V, "__ip_queue_xmit", take="ip_xmit", avoid=("__ip_select_ident",),
                                      need=("__sk_dst_check", "__ip_local_out")),
                                 Part(V, "__ip_local_out", need=("ip_send_check",)), Part(V, "ip_send_check"),
                                 Part(V, "ip_output"), Part(V, "ip_finish_output"), Part(V, "__ip_finish_output"),
                                 Part(V, "ip_finish_output2", take="ip_out2", need=("__dev_queue_xmit",),
                                      avoid=("__neigh_create",))],
                          note="an ACK on a routed socket: DF, TCP's inet_id, the IPv4 header checksum in software "
                               "(ip_send_check), the cached neighbour's header"),
    "dev_queue_xmit": dict(parts=[Part(V, "__dev_queue_xmit", take="dev_xmit", need=("sch_direct_xmit",),
                                       avoid=("kfree_skb_list_reason", "net_ratelimit")),
                                  Part(V, "validate_xmit_skb", take="validate_xmit", need=("skb_csum_hwoffload_help",),
                                       avoid=("__skb_gso_segment", "kfree_skb_reason")),
                                  Part(V, "skb_csum_hwoffload_help", take="csum_offload", avoid=("skb_checksum_help",)),
                                  Part(V, "sch_direct_xmit", take="direct_xmit", need=("validate_xmit_skb_list",),
                                       avoid=("queued_spin_lock_slowpath",)),
                                  Part(V, "dev_hard_start_xmit", take="hard_xmit", avoid=("dev_queue_xmit_nit",))],
                           note="an empty lockless qdisc bypassed to sch_direct_xmit: validate (the TCP checksum left "
                                "to the device), the TX lock, the driver's ndo_start_xmit (charged apart)"),
    "tcp_conn_request": dict(parts=[Part(V, "tcp_v4_conn_request"), Part(V, "tcp_conn_request")],
                             note="the SYN's request handling (once per connection; the SYN-ACK is charged as an ACK)"),
    "tcp_recvmsg": dict(parts=[Part(V, "tcp_recvmsg", take="recvmsg", avoid=("tcp_recv_timestamp",)),
                               Part(V, "tcp_recvmsg_locked", take="recvmsg_locked", loop="call",
                                    need=("skb_copy_datagram_iter", "sock_rfree", "tcp_cleanup_rbuf"),
                                    avoid=("sk_wait_data", "__warn_printk")),
                               Part(V, "lock_sock_nested", take="lock_sock",
                                    avoid=("queued_spin_lock_slowpath", "__lock_sock")),
                               Part(V, "release_sock", take="release_sock",
                                    avoid=("queued_spin_lock_slowpath", "__release_sock", "__wake_up"))],
                        note="a read: tcp_recvmsg (no cmsg, no inq hint), lock_sock and release_sock uncontended "
                             "without backlog, tcp_recvmsg_locked around its loop (tcp_recvmsg_skb per skb)"),
    "tcp_recvmsg_skb": dict(parts=[Part(V, "tcp_recvmsg_locked", take="recvmsg_locked", loop="body")],
                            note="one pass of tcp_recvmsg_locked's loop: the queue's skb in sequence, copied whole "
                                 "(skb_copy_datagram_iter charged apart), eaten (sock_rfree, skb_attempt_defer_free)"),
    "skb_copy_datagram_iter": dict(parts=[Part(V, "skb_copy_datagram_iter"), Part(V, "__skb_datagram_iter"),
                                          Part(V, "simple_copy_to_iter")]),
    "copy_to_user": dict(parts=[Part(V, "_copy_to_iter"), Part(V, "__arch_copy_to_user", loop="call", take="copy_large")],
                         note="one copy to the user buffer (_copy_to_iter, copyout) around the 64-byte loop"),
    "copy_to_user_line": dict(parts=[Part(V, "__arch_copy_to_user", loop="body", take="copy_large")],
                              note="one 64-byte iteration of the copy loop (copy_template.S)"),
    "tcp_cleanup_rbuf": dict(parts=[Part(V, "tcp_cleanup_rbuf", take="cleanup_rbuf", avoid=("__warn_printk",)),
                                    Part(V, "__tcp_cleanup_rbuf"), Part(V, "tcp_rcv_space_adjust")],
                             note="tcp_cleanup_rbuf, __tcp_cleanup_rbuf without an ACK (the layout: none scheduled, "
                                  "window not halved), tcp_rcv_space_adjust"),
    "try_to_wake_up": dict(parts=[Part(V, "try_to_wake_up")]),
    "context_switch": dict(parts=[Part(V, "__schedule"), Part(V, "finish_task_switch.isra.0"), Part(V, "__switch_to"),
                                  Part(V, "cpu_switch_to")]),
    "arch_timer_handler": dict(parts=[Part(V, "arch_timer_handler_virt")]),
    "run_timer_softirq": dict(parts=[Part(V, "run_timer_softirq"), Part(V, "__run_timers.part.0")]),
    "tcp_delack_timer": dict(parts=[Part(V, "tcp_delack_timer"), Part(V, "tcp_delack_timer_handler")]),
    # pktgen.ko inlines pktgen_xmit, fill_packet_ipv4 and netdev_start_xmit into the kthread
    "pktgen_thread_worker": dict(parts=[Part(P, "pktgen_thread_worker", loop="body", **PKTGEN),
                                        Part(P, "pktgen_thread_worker", "next_to_run", **PKTGEN)],
                                 note="one pass of the kthread loop: next_to_run, need_resched, cpu_relax"),
    "pktgen_xmit": dict(parts=[Part(P, "pktgen_thread_worker", "pktgen_xmit", loop="call", **PKTGEN)],
                        note="pktgen_xmit once per call: clone check, xmit lock, refcount_add(burst), unlock, count check"),
    "netdev_start_xmit": dict(parts=[Part(P, "pktgen_thread_worker", "pktgen_xmit", loop="body", **PKTGEN),
                                     Part(P, "pktgen_thread_worker", "netdev_start_xmit", **PKTGEN),
                                     Part(P, "pktgen_thread_worker", "__netdev_start_xmit", **PKTGEN)],
                              note="per packet of a burst: netdev_start_xmit (xmit_more, ndo call) and pktgen's counters"),
    "fill_packet_ipv4": dict(parts=[Part(P, "pktgen_thread_worker", "fill_packet_ipv4", **PKTGEN),
                                    Part(P, "mod_cur_headers"), Part(P, "pktgen_alloc_skb"), Part(P, "pktgen_finalize_skb")],
                             note="fill_packet_ipv4, mod_cur_headers, pktgen_alloc_skb (without __netdev_alloc_skb), pktgen_finalize_skb"),
    "skb_unref": dict(parts=[Part(V, "kfree_skb_reason", take="unref_shared")],
                      note="kfree_skb_reason returning at skb_unref: another reference remains"),
}
# keys whose walks were read with --trace and steered where the experiment leaves the layout
GROW_KEYS = set(grow_window_keys(()))
REVIEWED = {"arm64": {"generic_handle_irq", "fec_enet_interrupt", "fec_enet_collect_events", "fec_enet_rx_napi", "fec_enet_rx",
            "fec_enet_rx_queue", "fec_enet_rx_queue_bd", "fec_enet_rx_error", "fec_enet_update_cbd", "fec_enet_tx",
            "fec_enet_tx_queue", "fec_enet_tx_queue_bd", "fec_enet_rx_skb", "dma_sync_single", "dma_map_single",
            "dma_unmap_single", "dma_unmap_single_from_device", "dma_map_single_skip_sync", "dma_unmap_single_skip_sync", "dcache_by_line_op", "dcache_by_line_iter", "page_pool_alloc_fast",
            "swiotlb_map", "swiotlb_unmap", "swiotlb_release_merge", "swiotlb_sync_single", "swiotlb_bounce",
            "swiotlb_bounce_line",
            "page_pool_put_page", "page_pool_put_page_ring", "page_pool_recycle_ring", "page_pool_dma_map",
            "page_pool_refill", "page_pool_refill_page", "page_pool_alloc_slow", "page_pool_alloc_slow_page",
            "xdp_return_frame_rx_napi", "xdp_do_flush",
            "bpf_prog_run_xdp", "fec_enet_run_xdp", "xdp_convert_buff_to_frame", "fec_enet_xdp_tx_xmit",
            "fec_enet_txq_xmit_frame", "fec_txq_trigger_xmit", "fec_enet_start_xmit", "fec_enet_txq_submit_skb",
            "pktgen_thread_worker", "pktgen_xmit", "netdev_start_xmit", "fill_packet_ipv4", "skb_unref",
            "netdev_alloc_skb", "page_frag_alloc", "page_frag_free", "prep_compound_page", "prep_compound_tail",
            "tcp_v4_rcv", "tcp_rcv_established", "tcp_rcv_established_slow", "tcp_data_queue_in_order",
            "tcp_queue_rcv", "tcp_event_data_recv", "inet_gro_receive", "tcp_recvmsg", "tcp_recvmsg_skb", "sk_mem_schedule", "sk_forced_mem_schedule", "sock_rfree", "sock_rfree_reclaim",
            "netif_receive_skb_list_internal", "netif_receive_skb_core", "netif_receive_skb_list_next", "napi_gro_receive",
            "napi_gro_receive_held", "inet_gro_receive_held",
            "napi_gro_receive_normal", "ip_queue_xmit",
            "dev_queue_xmit", "alloc_skb", "fec_enet_txq_submit_skb_csum", "ip_rcv_finish_demuxed", "tcp_v4_rcv_demuxed",
            "tcp_v4_early_demux"} | GROW_KEYS,
            "armhf": {"fec_enet_interrupt", "fec_enet_collect_events", "fec_enet_rx_napi", "fec_enet_rx",
                      "fec_enet_rx_queue", "fec_enet_rx_queue_bd", "fec_enet_rx_error", "fec_enet_update_cbd",
                      "fec_enet_tx", "fec_enet_tx_queue", "fec_enet_tx_queue_bd", "fec_enet_rx_skb",
                      "bpf_prog_run_xdp", "fec_enet_run_xdp", "xdp_convert_buff_to_frame", "fec_enet_xdp_tx_xmit",
                      "fec_enet_txq_xmit_frame", "fec_txq_trigger_xmit", "fec_enet_start_xmit", "netdev_alloc_skb",
                      "fec_enet_txq_submit_skb", "dcache_by_line_op", "dcache_by_line_iter", "dma_sync_single",
                      "dma_map_single", "dma_unmap_single", "dma_unmap_single_from_device", "dma_map_single_skip_sync",
                      "dma_unmap_single_skip_sync", "tcp_rcv_established", "tcp_rcv_established_slow",
                      "tcp_data_queue_in_order", "tcp_queue_rcv", "sk_mem_schedule", "sk_forced_mem_schedule",
                      "sock_rfree", "sock_rfree_reclaim", "inet_gro_receive", "inet_gro_receive_held",
                      "tcp_event_data_recv", "netif_receive_skb_list_internal", "netif_receive_skb_list_next",
                      "tcp_recvmsg", "tcp_recvmsg_skb", "napi_gro_receive", "napi_gro_receive_held",
                      "ip_queue_xmit", "alloc_skb", "dev_queue_xmit", "tcp_v4_rcv", "netif_receive_skb_core",
                      "napi_gro_receive_normal", "fec_enet_txq_submit_skb_csum", "ip_rcv_finish_demuxed",
                      "tcp_v4_rcv_demuxed", "tcp_v4_early_demux"}
                     | GROW_KEYS}
for _k in ("xdp_prog_pass", "xdp_prog_drop", "xdp_prog_tx", "xdp_prog_parse", "xdp_prog_count",
           "xdp_prog_swap_macs", "xdp_prog_redirect"):
    SPEC[_k] = dict(estimate="a JITed XDP program: no package ships its JITed image")

# ARMv7 (i.MX6SX: Cortex-A9, GIC v2, PL310 outer cache): the same generic code, other entry,
# DMA cache maintenance through arch/arm/mm (dma-mapping.c, cache-v7.S, cache-l2x0.c)
ARM_SYNC_CPU = [Part(V, "arch_sync_dma_for_cpu"), Part(V, "__dma_page_dev_to_cpu", take="dev_to_cpu"),
                Part(V, "dma_cache_maint_page"),
                Part(V, "v7_dma_unmap_area")]
ARM_SYNC_DEV = [Part(V, "arch_sync_dma_for_device"), Part(V, "__dma_page_cpu_to_dev"),
                Part(V, "dma_cache_maint_page"), Part(V, "v7_dma_map_area")]
SPEC_ARMHF = dict(SPEC, **grow_window_keys(GROW_ADJUST["armhf"]), **{
    "generic_handle_irq": dict(parts=[
        Part(V, "__irq_svc"), Part(V, "generic_handle_arch_irq"), Part(V, "irq_enter"), Part(V, "irq_enter_rcu"),
        Part(V, "gic_handle_irq", pick="irq-gic.c"), Part(V, "generic_handle_domain_irq"),
        Part(V, "__irq_resolve_mapping"), Part(V, "handle_fasteoi_irq"), Part(V, "handle_irq_event"),
        Part(V, "__handle_irq_event_percpu"), Part(V, "irq_exit"), Part(V, "__irq_exit_rcu")],
        note="SVC-mode IRQ vector entry/exit, GIC v2 acknowledge/EOI, irq domain lookup, fasteoi flow, action dispatch"),
    "dma_sync_single": dict(mean=True, parts=[Part(V, "dma_sync_single_for_cpu", take="sync_cpu", group="cpu")] +
                            [Part(p.obj, p.fn, take=p.take, group="cpu") for p in ARM_SYNC_CPU] +
                            [Part(V, "dma_sync_single_for_device", take="sync_dev", group="dev")] +
                            [Part(p.obj, p.fn, group="dev") for p in ARM_SYNC_DEV],
                            note="mean of the sync for the CPU and for the device: DMA API, dma-direct, "
                                 "arch_sync_dma_*, __dma_page_*, dma_cache_maint_page, v7_dma_*_area"),
    "dma_map_single": dict(parts=[Part(V, "dma_map_page_attrs", take="map", need=SYNC_DEV)] + ARM_SYNC_DEV),
    "dma_unmap_single": dict(parts=[Part(V, "dma_unmap_page_attrs", take="unmap", need=SYNC_CPU)] + ARM_SYNC_CPU),
    "dma_unmap_single_from_device": dict(parts=[Part(V, "dma_unmap_page_attrs", take="unmap", need=SYNC_CPU)]
                                         + ARM_SYNC_CPU),
    "dcache_by_line_op": dict(mean=True, parts=[Part(V, "v7_dma_clean_range", loop="call"),
                                                Part(V, "v7_dma_inv_range", loop="call")],
                              note="mean of v7_dma_clean_range and v7_dma_inv_range around the line loop"),
    "dcache_by_line_iter": dict(mean=True, parts=[Part(V, "v7_dma_clean_range", loop="body"),
                                                  Part(V, "v7_dma_inv_range", loop="body")],
                                note="the v7 line loop without the MCR cache operation (charged by the core)"),
    "outer_cache_range": dict(mean=True, parts=[Part(V, "l2c210_clean_range", loop="call"),
                                                Part(V, "l2c210_inv_range", loop="call")],
                              note="PL310 range operation (mean of clean and invalidate) around the line loop"),
    "outer_cache_line": dict(mean=True, parts=[Part(V, "l2c210_clean_range", loop="body"),
                                               Part(V, "l2c210_inv_range", loop="body")],
                             note="the PL310 line loop without its register write (MMIO, charged by the core)"),
    "copy_to_user": dict(parts=[Part(V, "_copy_to_iter"), Part(V, "arm_copy_to_user"), Part(V, "__copy_to_user_std", loop="call")],
                         note="one copy to the user buffer (_copy_to_iter, arm_copy_to_user) around the copy loop"),
    "copy_to_user_line": dict(parts=[Part(V, "__copy_to_user_std", loop="body")] * 2,
                              note="64 bytes: two iterations of the ARM copy loop (copy_template.S, 32 bytes each)"),
    "context_switch": dict(parts=[Part(V, "__schedule"), Part(V, "finish_task_switch.isra.0"), Part(V, "__switch_to")]),
    **{k: dict(zero="an ARMv7 kernel without LPAE has no DRAM beyond a 32-bit DMA mask: nothing bounces")
       for k in ("swiotlb_map", "swiotlb_unmap", "swiotlb_release_merge", "swiotlb_sync_single", "swiotlb_bounce",
                 "swiotlb_bounce_line")},
    "tcp_event_data_recv": dict(SPEC["tcp_event_data_recv"], parts=[
        Part(V, "tcp_event_data_recv", take="event_data_recv", avoid=("__tcp_ecn_check_ce", "tcp_incr_quickack"))]),
    # tcp4_gro_receive tail-calls tcp_gro_receive (b, not bl)
    **{k: dict(SPEC[k], parts=[
        Part(V, "tcp4_gro_receive", take="tcp4_gro", avoid=("csum_tcpudp_nofold", "__skb_gro_checksum_complete"))
        if p.fn == "tcp4_gro_receive" else p for p in SPEC[k]["parts"]]) for k in ("inet_gro_receive", "inet_gro_receive_held")},
    **rx_list_keys(RX_LIST["armhf"]),
    # the socket spinlock is taken and released by calls, which arm64 inlines; the unlock ends in a
    # tail call to __local_bh_enable_ip
    "tcp_recvmsg": dict(SPEC["tcp_recvmsg"], parts=SPEC["tcp_recvmsg"]["parts"] + 2 * [
        Part(V, "_raw_spin_lock_bh", take="spin_lock_bh"), Part(V, "_raw_spin_unlock_bh"),
        Part(V, "__local_bh_enable_ip", take="bh_enable_process", avoid=("do_softirq", "warn_slowpath_fmt"))]),
    # the qdisc's TX lock is a call here (_raw_spin_lock), inline on arm64; qdisc_run_begin's trylock is a
    # call on both (arm64's qdisc_run_begin.part.0), not counted on either
    "dev_queue_xmit": dict(SPEC["dev_queue_xmit"], parts=[
        Part(V, "__dev_queue_xmit", take="dev_xmit", need=("sch_direct_xmit",),
             avoid=("kfree_skb_list_reason", "net_ratelimit", "dev_qdisc_enqueue", "__qdisc_run", "__netif_schedule")),
        Part(V, "validate_xmit_skb", take="validate_xmit", need=("skb_csum_hwoffload_help",),
             avoid=("__skb_gso_segment", "kfree_skb_reason")),
        Part(V, "skb_csum_hwoffload_help", take="csum_offload"),  # its skb_checksum_help is a tail call (b) here
        Part(V, "sch_direct_xmit", take="direct_xmit", need=("validate_xmit_skb_list", "_raw_spin_lock", "dev_hard_start_xmit"),
             avoid=("dev_requeue_skb", "net_ratelimit")),
        Part(V, "_raw_spin_lock", take="spin_lock"),
        Part(V, "dev_hard_start_xmit", take="hard_xmit", avoid=("dev_queue_xmit_nit",))]),
    # bh_lock_sock_nested is a call here (_raw_spin_lock), inline on arm64
    "tcp_v4_rcv": dict(SPEC["tcp_v4_rcv"], parts=[
        Part(V, "tcp_v4_rcv", take="v4_rcv", need=("tcp_v4_do_rcv", "_raw_spin_lock"), avoid=("kfree_skb_reason",)),
        Part(V, "__inet_lookup_established", take="lookup_est", avoid=("sock_gen_put",)),
        Part(V, "_raw_spin_lock", take="spin_lock"),
        Part(V, "tcp_v4_do_rcv", take="v4_do_rcv", need=("tcp_rcv_established",), avoid=("kfree_skb_reason",))]),
    "tcp_v4_rcv_demuxed": dict(SPEC["tcp_v4_rcv_demuxed"], parts=[
        Part(V, "tcp_v4_rcv", take="v4_rcv_demuxed", need=("tcp_v4_do_rcv", "_raw_spin_lock"),
             avoid=("kfree_skb_reason", "__inet_lookup_established")),
        Part(V, "_raw_spin_lock", take="spin_lock"),
        Part(V, "tcp_v4_do_rcv", take="v4_do_rcv", need=("tcp_rcv_established",), avoid=("kfree_skb_reason",))]),
    # sock_rfree's reclaim ends in a tail call (b, not bl) to __sk_mem_reduce_allocated
    "sock_rfree_reclaim": dict(parts=[Part(V, "sock_rfree", take="rfree_reclaim"),
                                      Part(V, "__sk_mem_reduce_allocated", take="reduce_allocated",
                                           avoid=("proto_memory_pcpu_drain", "mem_cgroup_uncharge_skmem"))],
                               note=SPEC["sock_rfree_reclaim"]["note"]),
})
for _k in ("pktgen_thread_worker", "pktgen_xmit", "netdev_start_xmit", "fill_packet_ipv4", "skb_unref"):
    SPEC_ARMHF[_k] = dict(estimate="pktgen runs on the arm64 board peer only; its ARMv7 walk is not steered yet")
SPECS = {"arm64": SPEC, "armhf": SPEC_ARMHF}


def measure(counter, key, spec, old, arch):
    """The JSON entry of one key."""
    was = old[key]["instructions"]
    if "zero" in spec:
        return {"instructions": 0, "why": spec["zero"], "method": "none on this architecture", "estimate_was": was}
    if "estimate" in spec:
        return {"instructions": was, "why": old[key]["why"], "method": "estimate (kept): " + spec["estimate"],
                "estimate_was": was}
    groups, funcs = walk_key(counter, spec)
    # "mean": the key stands for either of two routines (e.g. sync for the CPU or for the device)
    total, alts = sum(len(g) for g in groups.values()), len(groups) if spec.get("mean") else 1
    n = (2 * total + alts) // (2 * alts)  # rounded half up
    method = ("likely-path walk" + ("" if key in REVIEWED.get(arch, ()) else " (compiler layout, branches not reviewed)") + (", mean of %d alternatives" % len(groups) if spec.get("mean") else ""))
    if "derived" in spec:
        method = "derived from " + spec["derived"] + ": " + method
    why = spec.get("note") or ", ".join(f["name"] for f in funcs)
    return {"instructions": n, "why": why, "method": method, "functions": funcs, "estimate_was": was}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", default="all", choices=["all"] + list(ARCHES))
    ap.add_argument("--abi", default=PINNED["abi"],
                    help="Debian kernel ABI, e.g. 6.1.0-50, or 'newest' (the newest apt knows); default: the pinned "
                         "build %s (%s), whose layout the steering fits" % (PINNED["abi"], PINNED["version"]))
    ap.add_argument("--trace", metavar="KEY", help="print the walked path of KEY's functions and exit")
    ap.add_argument("--sequence", metavar="KEY",
                    help="print the instructions KEY counts, in walk order, as llvm-mca input (arm64) and exit")
    ap.add_argument("--mca", action="store_true",
                    help="print per arm64 key its instructions, llvm-mca's %s cycles and IPC (markdown) and exit"
                         % MCA_CPU)
    ap.add_argument("--mca-cpu", default=MCA_CPU, metavar="CPU",
                    help="llvm-mca's -mcpu for --mca (default %s; cortex-a55 for a second opinion)" % MCA_CPU)
    ap.add_argument("--mca-iterations", type=int, default=MCA_ITERATIONS, metavar="N",
                    help="passes llvm-mca runs per sequence; cycles are per pass (default %d)" % MCA_ITERATIONS)
    ap.add_argument("--out", help="output file (default configs/costs/linux-6.1-ARCH.json; one --arch)")
    ap.add_argument("--markdown", action="store_true",
                    help="print the committed table as the markdown of docs/firmware.md and exit (no download)")
    args = ap.parse_args()
    arches = list(ARCHES) if args.arch == "all" else [args.arch]
    if args.markdown:
        return markdown(arches)
    if args.abi != "newest" and not re.match(r"^6\.1\.0-[0-9]+$", args.abi):
        die("--abi %s: expected 6.1.0-N or newest" % args.abi)
    if args.out and len(arches) > 1:
        die("--out needs one --arch")
    if args.sequence or args.mca:
        if args.arch not in ("all", "arm64"):
            die("--sequence and --mca time arm64 code (llvm-mca's %s model)" % MCA_CPU)
        if args.mca_iterations < 1:
            die("--mca-iterations %d: expected 1 or more" % args.mca_iterations)
        arches = ["arm64"]
    # before the kernel's download: a key the walk does not measure is refused at once
    for flag, key in (("--trace", args.trace), ("--sequence", args.sequence)):
        if key is not None and any("parts" not in SPECS[name].get(key, {}) for name in arches):
            die("%s %s: not a measured key" % (flag, key))
    for name in arches:
        measure_arch(name, args)


def cost_keys():
    """The firmware's cost keys, in their order (firmware/kernel/costs.h)."""
    with open(os.path.join(ROOT, "firmware/kernel/costs.h")) as f:
        return re.findall(r"X\((\w+)\)", f.read().split("#define FECSIM_COST_PATHS")[1].split("enum class")[0])


def measure_arch(name, args):
    arch, spec = ARCHES[name], SPECS[name]
    apt_ready(arch)
    abi = newest_abi(arch) if args.abi == "newest" else args.abi
    files = fetch(arch, abi, PINNED["version"] if abi == PINNED["abi"] else None)
    objs = {k: Objfile(files[k], arch["tool"]) for k in ("vmlinux", "fec", "mvneta", "pktgen")}
    counter = Counter(objs, name, spec)
    if args.sequence:
        for k, seq in enumerate(key_sequences(counter, spec[args.sequence])):
            print("# %s%s: %d instructions" % (args.sequence, " (alternative %d)" % (k + 1) if k else "", len(seq)))
            print(mca_source(seq), end="")
        return
    if args.mca:
        return mca_table(counter, spec, [k for k in cost_keys() if k in spec], args.mca_iterations, args.mca_cpu)
    if args.trace:
        for p in spec[args.trace].get("parts", ()):
            print("== %s %s owner=%s loop=%s lines=%s" % (p.obj, p.fn, p.owner, p.loop, p.lines))
            path, owner, inloop, _ = counter.walked(p)
            start = path[0].addr
            for i, o, lp in zip(path, owner, inloop):
                mark = "*" if o[0] == p.owner and not excluded(i) else " "
                print("%s %6x %-8s %-36s %s:%d %s" % (mark, i.addr - start, i.mn, i.ops[:36], o[0], o[1],
                                                    "loop:" + ",".join(sorted(lp)) if lp else ""))
        return
    with open(os.path.join(ROOT, "configs/costs/linux-6.6.json")) as f:
        old = json.load(f)["paths"]
    keys = cost_keys()
    missing = [k for k in keys if k not in spec]
    if missing:
        die("no measurement rule for " + ", ".join(missing))
    paths = {k: measure(counter, k, spec[k], old, name) for k in keys}
    doc = {
        "//": "Code-path instruction counts measured from Debian's compiled Linux %s (%s, package %s) by "
              "scripts/kernel-costs.py (make costs); docs/firmware.md \"Code-path costs\" gives the method and "
              "its error. Do not edit by hand: re-run the tool." % (abi, name, files["package"]),
        "//method": "likely-path walk: from the entry along fall-through and unconditional branches, conditional "
                    "branches not taken unless the modelled experiment takes them; a loop's body counted per "
                    "iteration under the per-iteration key; inlined callees attributed by the DWARF inline chain; "
                    "MMIO accessors, barriers and cache-line operations left out (the core model charges them).",
        "paths": paths,
    }
    out = args.out or os.path.join(ROOT, "configs/costs/linux-6.1-%s.json" % name)
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print("kernel-costs: wrote %s (%d paths)" % (os.path.relpath(out, ROOT), len(paths)))

def markdown(arches):
    tables = {}
    for name in arches:
        with open(os.path.join(ROOT, "configs/costs/linux-6.1-%s.json" % name)) as f:
            tables[name] = json.load(f)["paths"]
    first = tables[arches[0]]
    print("| path | " + " | ".join("6.1 %s" % a for a in arches) + " | old estimate | functions (%s) | method (%s) |"
          % (arches[0], arches[0]))
    print("| --- | " + " | ".join("---:" for _ in arches) + " | ---: | --- | --- |")
    for key, e in first.items():
        funcs = ", ".join("%s %d" % (f["name"], f["count"]) for f in e.get("functions", [])) or "—"
        counts = " | ".join(str(tables[a][key]["instructions"]) for a in arches)
        print("| `%s` | %s | %d | %s | %s |" % (key, counts, e["estimate_was"], funcs, e["method"]))

if __name__ == "__main__":
    main()
