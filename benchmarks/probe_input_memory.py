"""Probe: peak memory of the whole ``kneecap`` process on the inputs that grew it without bound (issue 35, item 4).

Each probe builds its input in a scratch folder, runs one command on it as a process of its own
and polls the resident memory of that process and its children (the SMF framing child included)
every 20 ms; the peak of their sum is the figure. The goal is a peak of at most 500 MB for each.

* ``utf16_xml``: an RMF XML document in UTF-16 whose internal DTD declares a 1,000-character
  entity, referenced in every one of ``--xml-refs`` elements of one interval (about 10 MB of input,
  at expat's default amplification limit): ``kneecap ingest F --out D``.
* ``vbs_chain``: an SMF dump holding one spanned record of ``--chain-mb`` MB (a first segment and
  32,756-byte middle segments, then its last one) between complete records: ``kneecap ingest``.
* ``vbs_chain_gz``: the same, ``--gzip-mb`` MB decompressed, gzip-compressed (each segment holds
  some random bytes, so the stream stays under the 400:1 ratio limit): ``kneecap ingest``.
* ``yaml_bomb``: a 400-byte scenarios file whose ``clients`` is nine levels of nine aliases (387
  million items once walked): ``kneecap simulate --scenarios F``.
* ``dev_zero``: ``kneecap check /dev/zero``.
* ``desk_utf16_xml``, ``desk_vbs_chain_gz``: the first and third inputs through the desk's upload
  path (``app/resources.ingest_upload``), in a Python process of their own.

A process whose memory passes ``--cap-mb`` is stopped (its row says so): the probe never takes the
machine's memory. ``--root`` runs another checkout's code (its ``src`` and ``app``), e.g. a
``git archive`` of the commit before the fix, for the figures before.

Usage::

    PYTHONPATH=src python benchmarks/probe_input_memory.py [--label after] [--root .]
        [--chain-mb 100] [--gzip-mb 400] [--cap-mb 3000] [--save benchmarks/results/input_memory.csv]
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "smf"))
import synth  # noqa: E402

#: The goal for every probe: peak resident memory of the whole process (and its children).
GOAL_MB = 500
#: Data bytes of a full VBS segment (an SDW's length is at most 32,760, its own 4 bytes included).
SEGMENT_DATA = 32756
SAMPLE = ROOT / "data" / "raw" / "rmf-samples" / "rmfpp-cpu-small-RPRT-20220412.xml"


# ------------------------------------------------------------------------------------------------- inputs

def utf16_xml(refs: int) -> bytes:
    """An RMF document in UTF-16 with an entity DTD, the entity referenced ``refs`` times in one interval."""
    head = ('<?xml version="1.0" encoding="UTF-16"?>\n'
            f'<!DOCTYPE ddsml [<!ENTITY a "{"A" * 1000}">]>\n'
            "<ddsml><server><name>RMF-DDS-Server</name></server><postprocessor>"
            '<metric id="CPU"><description>CPU Activity</description></metric>')
    return (head + "<v>&a;</v>" * refs + "</postprocessor></ddsml>").encode("utf-16")


def vbs_chain(mb: int, noisy: bool) -> bytes:
    """Complete records, one spanned record of ``mb`` MB in full segments, complete records again."""
    records, _ = synth.week_of_intervals(days=0.05)
    first = records[0]
    rng = __import__("random").Random(35)
    out = bytearray(synth.frame_rdw(records[1:4]))
    out += struct.pack(">HBB", len(first), 1, 0) + first[4:]
    n = max(1, mb * (1 << 20) // (SEGMENT_DATA + 4))
    for i in range(n):
        data = (rng.randbytes(2048) + bytes(SEGMENT_DATA - 2048)) if noisy else bytes(SEGMENT_DATA)
        out += struct.pack(">HBB", SEGMENT_DATA + 4, 2 if i == n - 1 else 3, 0) + data
    out += synth.frame_rdw(records[4:8])
    return bytes(out)


def yaml_bomb() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"{c}: &{c} [{','.join([f'*{p}'] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi", strict=True)]
    return "\n".join(lines) + "\nscenarios:\n  - {name: bomb, n_gcp: 1, n_ziip: 0, cpu_ms_per_tran: 1, " \
                              "ziip_eligible_fraction: 0.5, clients: *i}\n"


# ------------------------------------------------------------------------------------------------- measuring

def peak_rss(cmd: list[str], env: dict[str, str], cwd: Path, cap_mb: float, timeout_s: float) -> dict[str, object]:
    """Run ``cmd``; its exit code, seconds and the peak of its process tree's summed RSS (MB), polled every 20 ms."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err, text=True,
                                start_new_session=True)
        top = psutil.Process(proc.pid)
        peak, stopped = 0.0, ""
        while proc.poll() is None:
            try:
                tree = [top, *top.children(recursive=True)]
                rss = sum(p.memory_info().rss for p in tree if p.is_running()) / (1 << 20)
            except psutil.Error:
                rss = 0.0
            peak = max(peak, rss)
            took = time.perf_counter() - t0
            if rss > cap_mb or took > timeout_s:
                stopped = f"stopped at {'the ' + str(int(cap_mb)) + ' MB cap' if rss > cap_mb else 'the time limit'}"
                os.killpg(proc.pid, 9)  # its own session: the command and the children it started
                proc.wait()
                break
            time.sleep(0.02)
        err.seek(0)
        # the command's own last word (not Streamlit's "no runtime" warnings), the scratch folder's name left out
        said = [line.replace(str(cwd), "<scratch>") for line in err.read().splitlines()
                if line.strip() and "streamlit" not in line]
        last = said[-1:] or [""]
    return {"rc": proc.returncode, "seconds": round(time.perf_counter() - t0, 1), "peak_rss_mb": round(peak),
            "stopped": stopped, "last_stderr": last[0][:160]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=ROOT, help="checkout whose src/ and app/ run (default this one)")
    ap.add_argument("--label", default="after", help="the rows' label in the saved table (before, after)")
    ap.add_argument("--xml-refs", type=int, default=480_000, help="entity references in the UTF-16 document")
    ap.add_argument("--chain-mb", type=int, default=100, help="MB of the plain spanned chain")
    ap.add_argument("--gzip-mb", type=int, default=400, help="MB of the gzipped chain, decompressed")
    ap.add_argument("--cap-mb", type=float, default=3000, help="stop a process past this many MB")
    ap.add_argument("--timeout", type=float, default=600, help="stop a process after this many seconds")
    ap.add_argument("--only", nargs="*", help="probes to run (default all)")
    ap.add_argument("--save", type=Path, help="CSV to write this label's rows to (other labels' rows are kept)")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    env = {**os.environ, "PYTHONPATH": str(root / "src"), "MLFLOW_DISABLE_TELEMETRY": "true"}
    kneecap = [sys.executable, "-m", "kneecap.cli"]
    work = Path(tempfile.mkdtemp(prefix="kneecap-probe-"))
    try:
        xml = work / "laughs-utf16.xml"
        xml.write_bytes(utf16_xml(args.xml_refs))
        chain = work / "chain.smf"
        chain.write_bytes(vbs_chain(args.chain_mb, noisy=False))
        chain_gz = work / "chain.smf.gz"
        chain_gz.write_bytes(gzip.compress(vbs_chain(args.gzip_mb, noisy=True), compresslevel=6))
        bomb = work / "bomb.yaml"
        bomb.write_text(yaml_bomb(), encoding="utf-8")
        # an upload's refusal is a ValueError both before and since it moved to kneecap.upload
        upload = ("import sys; sys.path.insert(0, {app!r})\nimport resources\nfrom pathlib import Path\n"
                  "p = Path({path!r})\ntry:\n    resources.ingest_upload({name!r}, p.read_bytes())\n"
                  "except ValueError as exc:\n    print(exc, file=sys.stderr); sys.exit(1)\n")
        probes = [
            ("utf16_xml", xml, [*kneecap, "-q", "ingest", str(xml), "--out", str(work / "out1")]),
            ("vbs_chain", chain, [*kneecap, "-q", "ingest", str(chain), "--out", str(work / "out2")]),
            ("vbs_chain_gz", chain_gz, [*kneecap, "-q", "ingest", str(chain_gz), "--out", str(work / "out3")]),
            ("yaml_bomb", bomb, [*kneecap, "-q", "simulate", "--scenarios", str(bomb)]),
            ("dev_zero", Path("/dev/zero"), [*kneecap, "-q", "check", "/dev/zero", "--sql",
                                             str(root / "pipelines" / "sql")]),
            ("desk_utf16_xml", xml, [sys.executable, "-c", upload.format(app=str(root / "app"), path=str(xml),
                                                                          name="report.xml")]),
            ("desk_vbs_chain_gz", chain_gz, [sys.executable, "-c", upload.format(
                app=str(root / "app"), path=str(chain_gz), name="chain.smf.gz")]),
        ]
        rows = []
        print(f"{'probe':18} {'input':>10} {'rc':>4} {'seconds':>8} {'peak RSS':>9}  goal <= {GOAL_MB} MB")
        for name, path, cmd in probes:
            if args.only and name not in args.only:
                continue
            size = path.stat().st_size if path.is_file() else 0
            got = peak_rss(cmd, env, work, args.cap_mb, args.timeout)
            ok = not got["stopped"] and got["peak_rss_mb"] <= GOAL_MB
            rows.append({"label": args.label, "probe": name, "input_mb": round(size / 1e6, 1), **got,
                         "goal_mb": GOAL_MB, "met": ok})
            shown = f"{got['peak_rss_mb']:,} MB" + (f" ({got['stopped']})" if got["stopped"] else "")
            print(f"{name:18} {size / 1e6:8.1f}MB {got['rc']!s:>4} {got['seconds']:8.1f} {shown:>9}  "
                  f"{'met' if ok else 'NOT met'}  {got['last_stderr'][:90]}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.save:
        table = pd.DataFrame(rows)
        if args.save.exists():
            old = pd.read_csv(args.save)
            table = pd.concat([old[old["label"] != args.label], table], ignore_index=True)
        args.save.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.save, index=False)
    return 0 if all(r["met"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
