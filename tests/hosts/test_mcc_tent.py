# SPDX-License-Identifier: MIT
"""unittest of the mcc_tent ctypes binding against the built libmcc_tent."""
import os
import tempfile
import unittest

import mcc_tent


class TestCongestionQueries(unittest.TestCase):
    def _demo(self, mode):
        mdir = os.environ.get("MCC_TEST_MODULE_DIR")
        ini = tempfile.NamedTemporaryFile("w", suffix=".ini", delete=False)
        ini.write("[policy]\nmode = %s\n" % mode)
        ini.close()
        self.addCleanup(os.unlink, ini.name)
        return mcc_tent.Demo(cc_config=ini.name, cc_plugin_dir=mdir)

    def test_enum_matches_the_abi(self):
        self.assertEqual([s.value for s in mcc_tent.TaskCongestionState], [0, 1, 2, 3])
        self.assertEqual(mcc_tent.TaskCongestionState(2).name, "LONG_UNAVAILABLE")

    def test_off_mode_reports_unknown_until_batch_free(self):
        with self._demo("off") as d:
            b = d.transfer(1 << 20)
            st = d.engine.get_task_congestion_state(b, 0)
            self.assertIsInstance(st, mcc_tent.TaskCongestionState)
            self.assertEqual(st, mcc_tent.TaskCongestionState.UNKNOWN)
            det = d.engine.get_task_congestion_detail(b, 0)
            self.assertEqual(det.struct_size, 184)
            self.assertEqual(det.state, st)
            d.engine.free_batch(b)
            with self.assertRaises(OSError):
                d.engine.get_task_congestion_state(b + 1, 0)

    def test_observe_mode_healthy_transfer_is_not_congested(self):
        with self._demo("observe") as d:
            b = d.transfer(4 << 20)
            st = d.engine.get_task_congestion_state(b, 0)
            det = d.engine.get_task_congestion_detail(b, 0).as_dict()
            self.assertIn(st, (mcc_tent.TaskCongestionState.NORMAL,
                               mcc_tent.TaskCongestionState.UNKNOWN))
            self.assertEqual(det["state"], st)
            d.engine.free_batch(b)

    def test_bad_task_id_is_an_error(self):
        with self._demo("off") as d:
            b = d.transfer(65536)
            with self.assertRaises(OSError):
                d.engine.get_task_congestion_detail(b, 5)
            d.engine.free_batch(b)


if __name__ == "__main__":
    unittest.main()
