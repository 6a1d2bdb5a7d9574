"""The performance predictor's measured error, by the protocol of benchmarks/PERF_PROTOCOL.md.

    .venv/bin/python benchmarks/perf_error.py            # print every split's error tables
    .venv/bin/python benchmarks/perf_error.py --write    # and regenerate calculators/perf_fit.py

Fits the factors on each split's fitting rows (the time split: MLPerf up to v5.1 and numbered
TensorRT-LLM releases up to 0.20; leave-one-GPU-out; leave-one-model-family-out), predicts its
test rows, and prints per split and kind, then per GPU, scenario and precision, the rows, the
median absolute percentage error and the share within 25 %. `--write` writes the time split's
factors and every split's held-out figures into calculators/perf_fit.py, which the site and the
CLI read, and every held-out prediction into registry/perf_held_out.json (the site's error page
links each); tests/test_perf_fit.py holds both files to this script.
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from infermeter.registry.perf_error import (  # noqa: E402
    HELD_OUT_FILE,
    error_report,
    fit_file_text,
    format_report,
    held_out_file_text,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="Regenerate calculators/perf_fit.py.")
    parser.add_argument(
        "--by", action="store_true", help="Also print per GPU, scenario, precision."
    )
    args = parser.parse_args()
    report = error_report(ROOT)
    print(format_report(report, detailed=args.by))
    if args.write:
        (ROOT / "calculators" / "perf_fit.py").write_text(fit_file_text(report), encoding="utf-8")
        (ROOT / HELD_OUT_FILE).write_text(held_out_file_text(report), encoding="utf-8")
        print(f"wrote calculators/perf_fit.py and {HELD_OUT_FILE}")


if __name__ == "__main__":
    main()
