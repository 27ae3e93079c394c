#!/usr/bin/env python3
"""The likely-path walk of scripts/kernel-costs.py on hand-written ARM code (no kernel package):
the branch choices the steering relies on; the instruction sequence a key counts, as llvm-mca
input, and llvm-mca's timing of it; a key it does not measure refused before the download. Exit
status 0 when every check holds."""
import importlib.util
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location("kernel_costs", os.path.join(ROOT, "scripts", "kernel-costs.py"))
kc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(kc)

# dev_hard_start_xmit's shape on armhf: a rotated while (skb) loop, entered by a jump to its test
# (0x14), whose pass ends either at that test again or at the queue-stopped break (0x10 -> 0x30).
LOOP = [(0x00, "push", "{r4, lr}"),
        (0x04, "b", "14 <f+0x14>"),
        (0x08, "ldr", "r3, [r8]"),
        (0x0c, "tst", "r3, #1"),
        (0x10, "bne", "30 <f+0x30>"),
        (0x14, "cmp", "r4, #0"),
        (0x18, "beq", "2c <f+0x2c>"),
        (0x1c, "mov", "r0, r4"),
        (0x20, "blx", "r3"),
        (0x24, "cmp", "r0, #0"),
        (0x28, "beq", "8 <f+0x8>"),
        (0x2c, "pop", "{r4, pc}"),
        (0x30, "mov", "r4, r6"),
        (0x34, "b", "2c <f+0x2c>")]


def walk(take):
    insns = [kc.Insn(a, mn, ops, [("f", 1)]) for a, mn, ops in LOOP]
    path, loops, _ = kc.walk(insns, "armhf", 0, 0x38, take)
    return [i.addr for i in path], loops


class LoopExit(unittest.TestCase):
    def test_without_an_exit_the_walk_leaves_by_the_last_exit_on_its_pass(self):
        path, _ = walk((0x28,))
        self.assertEqual(path, [0x00, 0x04, 0x14, 0x18, 0x1c, 0x20, 0x24, 0x28, 0x08, 0x0c, 0x10,
                                0x30, 0x34, 0x2c])

    def test_a_named_exit_tests_the_loop_condition_again_and_leaves_there(self):
        path, loops = walk((0x28, ("exit", 0x18)))
        self.assertEqual(path, [0x00, 0x04, 0x14, 0x18, 0x1c, 0x20, 0x24, 0x28, 0x08, 0x0c, 0x10,
                                0x14, 0x18, 0x2c])
        self.assertEqual(len(loops), 1)  # one pass, closed once

    def test_an_exit_that_does_not_leave_the_loop_is_refused(self):
        with self.assertRaises(SystemExit) as e:
            walk((0x28, ("exit", 0x24)))
        self.assertEqual(e.exception.code, 2)

    def test_a_taken_branch_is_followed_at_its_first_encounter(self):
        path, loops = walk((0x18,))  # no skb: the test at the head leaves at once
        self.assertEqual(path, [0x00, 0x04, 0x14, 0x18, 0x2c])
        self.assertEqual(loops, [])


# An arm64 function as objdump prints it: a call, a barrier (charged by the core, not counted), a
# taken branch over cold code, a literal comment, a PAC hint and the return.
A64 = [(0x00, "paciasp", ""),
       (0x04, "stp", "x29, x30, [sp, #-16]!"),
       (0x08, "mov", "x3, #0x0                   \t// #0"),
       (0x0c, "bl", "0 <memcpy>"),
       (0x10, "dmb", "ishst"),
       (0x14, "cbz", "w0, 20 <g+0x20>"),
       (0x18, "ldr", "x1, [x0, #8]"),
       (0x1c, "b", "24 <g+0x24>"),
       (0x20, "ldr", "x1, [x0, #16]"),
       (0x24, "ldp", "x29, x30, [sp], #16"),
       (0x28, "autiasp", ""),
       (0x2c, "ret", "")]


class Stub:
    """The Objfile interface the Counter uses, on hand-written code."""
    syms = {"g": [(0, 0x30)]}

    def function(self, name, pick=0):
        return 0, 0x30

    def disassemble(self, start, end):
        return [kc.Insn(a, mn, ops, [("g", 1)]) for a, mn, ops in A64]


def sequence(take=()):
    spec = {"k": dict(parts=[kc.Part("obj", "g", take=take)])}
    return kc.key_sequences(kc.Counter({"obj": Stub()}, "arm64", spec), spec["k"])


class Sequence(unittest.TestCase):
    def test_the_sequence_is_what_the_key_counts_in_walk_order(self):
        (seq,) = sequence()
        self.assertEqual([i.addr for i in seq], [0x00, 0x04, 0x08, 0x0c, 0x14, 0x18, 0x1c, 0x24, 0x28, 0x2c])

    def test_a_taken_branch_puts_the_other_side_in_the_sequence(self):
        (seq,) = sequence(take=(0x14,))
        self.assertEqual([i.addr for i in seq], [0x00, 0x04, 0x08, 0x0c, 0x14, 0x20, 0x24, 0x28, 0x2c])

    def test_the_assembly_llvm_mca_reads(self):
        (seq,) = sequence()
        self.assertEqual(kc.mca_source(seq).splitlines(), [
            ".Lpath:", "nop", "stp x29, x30, [sp, #-16]!", "mov x3, #0x0", "b .Lpath", "cbz w0, .Lpath",
            "ldr x1, [x0, #8]", "b .Lpath", "ldp x29, x30, [sp], #16", "nop", "ret"])

    def test_the_mix_counts_loads_stores_and_conditional_branches(self):
        (seq,) = sequence()
        self.assertEqual(kc.mix(seq), (2, 1, 1))  # ldr, ldp; stp; cbz

    def test_a_mean_key_has_one_sequence_per_alternative(self):
        spec = {"k": dict(mean=True, parts=[kc.Part("obj", "g", group="a"), kc.Part("obj", "g", take=(0x14,), group="b")])}
        alts = kc.key_sequences(kc.Counter({"obj": Stub()}, "arm64", spec), spec["k"])
        self.assertEqual([len(a) for a in alts], [10, 9])


SUMMARY = """Iterations:        100
Instructions:      400
Total Cycles:      253
Total uOps:        400

Dispatch Width:    2
IPC:               1.58
"""


class Mca(unittest.TestCase):
    def test_the_summary_gives_instructions_and_cycles_per_pass(self):
        self.assertEqual(kc.mca_parse(SUMMARY), (4.0, 2.53))

    def test_output_without_a_summary_is_refused(self):
        with self.assertRaises(SystemExit) as e:
            kc.mca_parse(SUMMARY.replace("Total Cycles", "Cycles"))
        self.assertEqual(e.exception.code, 2)

    def cycles(self, lines):
        return kc.mca_cycles([kc.Insn(4 * k, *line.split(" ", 1), []) for k, line in enumerate(lines)])

    # LLVM's Cortex-A53 model: two ALU instructions issue per cycle, a dependent one the next cycle
    def test_independent_instructions_dual_issue(self):
        self.assertAlmostEqual(self.cycles(["add x1, x5, #1", "add x2, x5, #1", "add x3, x5, #1", "add x4, x5, #1"]),
                               2, delta=0.1)

    def test_a_dependent_chain_issues_one_per_cycle(self):
        self.assertAlmostEqual(self.cycles(["add x0, x0, #1"] * 4), 4, delta=0.1)

    def test_a_call_costs_its_branch_not_a_placeholder(self):
        self.assertLess(self.cycles(["bl 0 <memcpy>", "add x1, x5, #1"]), 3)

    def test_without_llvm_mca_the_tool_says_so(self):
        path = os.environ["PATH"]
        os.environ["PATH"] = ""
        try:
            with self.assertRaises(SystemExit) as e:
                self.cycles(["add x0, x0, #1"])
        finally:
            os.environ["PATH"] = path
        self.assertEqual(e.exception.code, 2)


class Arguments(unittest.TestCase):
    """A key the walk does not measure is refused with one line and status 2, before the download."""

    def main(self, *argv):
        saved_argv, saved_measure = sys.argv, kc.measure_arch
        sys.argv = ["kernel-costs.py", *argv]
        kc.measure_arch = lambda name, args: self.fail("reached the download for " + " ".join(argv))
        try:
            with self.assertRaises(SystemExit) as e:
                kc.main()
        finally:
            sys.argv, kc.measure_arch = saved_argv, saved_measure
        self.assertEqual(e.exception.code, 2)

    def test_an_unknown_key_to_trace(self):
        self.main("--trace", "no_such_key")

    def test_an_unknown_key_to_time(self):
        self.main("--sequence", "no_such_key")

    def test_a_key_with_no_walk(self):  # a zero or an estimate, no functions
        self.main("--trace", "tcp_ofo_queue")
        self.main("--sequence", "outer_cache_line")


if __name__ == "__main__":
    unittest.main()
