"""``python -m tests.bench.sandbox``: the reference operator wallet's throughput under keep-alive
load (docs/wallet-api.md, "The reference wallet").

Starts ``python -m operator_wallet`` with a state file (the journal on, as a restartable
sandbox runs) on 127.0.0.1, and drives it for ``--seconds`` with ``--connections`` keep-alive
connections of ``wrk`` (Debian's C load generator; ``tests/services.sh`` installs it). The bodies
are signed debits prepared beforehand (a Lua script cannot compute HMAC-SHA256 at that rate), each
with its own transaction id, spread over ``--players`` players; past the prepared ones the
script starts again from the first, whose debits are then replays. Prints calls/s, latency
percentiles, the wallet's CPU per call (one second over it bounds the rate: the wallet is one
process on one core; on a shared machine the share of a core it got is printed beside), the CPU
wrk used, the answers' statuses and the wallet's own counters. Never asserts."""

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import urllib.request
import uuid
from datetime import UTC, datetime
from pathlib import Path

from tests.operator_wallet.sandbox import SECRET, debit_fields, free_port, sign

ROOT = Path(__file__).resolve().parents[2]

#: Each wrk thread walks its share of the prepared (signature, body) lines; every answer's status
#: is counted from its body. At the end: one JSON line with the counts and latency (microseconds).
LUA = r"""
local path, threads = "%s", %d
local counter, all = 0, {}
function setup(thread) thread:set("id", counter); counter = counter + 1; table.insert(all, thread) end
function init(args)
  sigs, bodies, i, statuses = {}, {}, 0, {}
  local n = 0
  for line in io.lines(path) do
    if n %% threads == id then
      local sig, body = line:match("^(%%x+)\t(.*)$")
      table.insert(sigs, sig); table.insert(bodies, body)
    end
    n = n + 1
  end
end
function request()
  i = i %% #bodies + 1
  return wrk.format("POST", "/debit", {["Content-Type"] = "application/json", ["X-Signature"] = sigs[i]}, bodies[i])
end
function response(status, headers, body)
  local s = status == 200 and body:match('"status": "([A-Z_]+)"') or tostring(status)
  statuses[s] = (statuses[s] or 0) + 1
end
function done(summary, latency, requests)
  local merged = {}
  for _, thread in ipairs(all) do
    for k, v in pairs(thread:get("statuses")) do merged[k] = (merged[k] or 0) + v end
  end
  local parts = {}
  for k, v in pairs(merged) do table.insert(parts, string.format('"%%s": %%d', k, v)) end
  local e = summary.errors
  io.write(string.format(
    'RESULT {"requests": %%d, "us": %%d, "p50": %%d, "p99": %%d, "errors": %%d, "statuses": {%%s}}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout, table.concat(parts, ", ")))
end
"""


def prepare(path, count, players):
    """Write ``count`` signed debit bodies (``signature<TAB>body`` lines) to ``path``."""
    rng = random.Random(1)
    with open(path, "w") as out:
        for n in range(count):
            fields = debit_fields(f"bench:stake:{n}", player=f"player-{rng.randrange(players)}", amount="1.00",
                                  round=n // 100, bets=[n])
            content = json.dumps({"request_id": str(uuid.uuid4()), "sent_at": datetime.now(UTC).isoformat(),
                                  **fields})
            out.write(f"{sign(content.encode())}\t{content}\n")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--threads", type=int, default=1, help="wrk threads (the wallet is one process)")
    parser.add_argument("--bodies", type=int, default=200_000)
    parser.add_argument("--players", type=int, default=1000)
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        bodies, script, state = Path(tmp, "bodies.tsv"), Path(tmp, "debits.lua"), Path(tmp, "wallet.journal")
        prepare(bodies, args.bodies, args.players)
        script.write_text(LUA % (bodies, args.threads))
        wallet = subprocess.Popen([sys.executable, "-m", "operator_wallet", "--port", str(port), "--secret", SECRET,
                                   "--state", str(state), "--initial-balance", "1000000.00"],
                                  cwd=ROOT, stdout=subprocess.PIPE, text=True)
        try:
            print(wallet.stdout.readline().strip())
            url = f"http://127.0.0.1:{port}"
            before, children = cpu_seconds(wallet.pid), resource.getrusage(resource.RUSAGE_CHILDREN)
            out = subprocess.run(["wrk", "-t", str(args.threads), "-c", str(args.connections),
                                  "-d", f"{args.seconds}s", "--timeout", "10s", "-s", str(script), url],
                                 capture_output=True, text=True, check=True).stdout
            cpu, after = cpu_seconds(wallet.pid) - before, resource.getrusage(resource.RUSAGE_CHILDREN)
            with urllib.request.urlopen(f"{url}/_admin/state") as answer:
                counters = json.load(answer)["counters"]
            journal_bytes = state.stat().st_size
        finally:
            wallet.terminate()
            wallet.wait(10)
    result = json.loads(next(line for line in out.splitlines() if line.startswith("RESULT "))[7:])
    seconds = result["us"] / 1e6
    print(f"wrk: {args.connections} keep-alive connections, {args.threads} thread(s), {seconds:.1f} s of signed debits")
    print(f"  {result['requests'] / seconds:,.0f} calls/s   p50 {result['p50'] / 1000:.2f} ms   "
          f"p99 {result['p99'] / 1000:.2f} ms   socket errors {result['errors']}")
    client = (after.ru_utime - children.ru_utime) + (after.ru_stime - children.ru_stime)
    print(f"  wallet CPU {cpu / max(result['requests'], 1) * 1e6:.0f} us per call ({cpu / seconds:.2f} cores), "
          f"wrk {client / seconds:.2f} cores;  answers {result['statuses']}")
    print(f"  wallet counters: calls {counters['calls']}, replays {counters['replays']}, "
          f"applied_twice {counters['applied_twice']};  journal {journal_bytes / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
