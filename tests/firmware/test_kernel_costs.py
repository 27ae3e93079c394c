#!/usr/bin/env python3
"""The likely-path walk of scripts/kernel-costs.py on hand-written ARM code (no kernel package):
the branch choices the steering relies on. Exit status 0 when every check holds."""
import importlib.util
import os
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


if __name__ == "__main__":
    unittest.main()
