"""A UCI engine on pipes, shared by the measurement scripts (latency, mates, memory, speed,
threads).

Every stdout line is timestamped on arrival by a reader thread (latency needs the arrival
time, not the time the script got round to reading it); stderr is kept for failure messages.
All reads take a timeout, so a hung engine ends the script with a message instead of
blocking it.

    from uci_engine import UciEngine
    eng = UciEngine(["target/release/madhouse"])
    eng.uci({"Threads": 1, "Hash": 64})
    eng.send("position startpos")
    t, line, before = eng.until("bestmove", send="go depth 8")
    eng.quit()
"""
import queue
import subprocess
import threading
import time


class UciEngine:
    """A UCI engine process; `cmd` is the command line as a list, `env` its environment
    (default: this process's)."""

    def __init__(self, cmd, env=None):
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, bufsize=1, env=env)
        self.pid = self.proc.pid
        self.lines = queue.Queue()
        self.stderr = []
        threading.Thread(target=self._read, daemon=True).start()
        self._err_reader = threading.Thread(target=self._read_err, daemon=True)
        self._err_reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put((time.perf_counter(), line.rstrip("\r\n")))
        self.lines.put((time.perf_counter(), None))

    def _read_err(self):
        for line in self.proc.stderr:
            self.stderr.append(line.rstrip("\r\n"))

    def _closed(self):
        return RuntimeError("the engine closed its output (crashed?); stderr:\n" + "\n".join(self.stderr[-20:]))

    def send(self, line):
        """Sends a line; returns the time just before it was written (a reply can arrive, and be
        timestamped by the reader thread, before the write call returns)."""
        t = time.perf_counter()
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return t

    def read(self, timeout):
        """The next (arrival time, line), or None on timeout. Raises at end of output."""
        try:
            t, line = self.lines.get(timeout=max(timeout, 0))
        except queue.Empty:
            return None
        if line is None:
            raise self._closed()
        return t, line

    def until(self, match, timeout=60.0, send=None):
        """Sends `send` (if given), then reads up to the first line that starts with `match`
        (a string) or satisfies it (a function). Returns (arrival time, line, lines before)."""
        test = match if callable(match) else (lambda l: l.startswith(match))
        if send is not None:
            self.send(send)
        end = time.perf_counter() + timeout
        seen = []
        while True:
            got = self.read(end - time.perf_counter())
            if got is None:
                raise RuntimeError(f"no '{getattr(match, '__name__', match)}' within {timeout} s; "
                                   f"last lines: {seen[-5:]}")
            if test(got[1]):
                return got[0], got[1], seen
            seen.append(got[1])

    def drain(self):
        """The (time, line) pairs already received, without waiting."""
        out = []
        while True:
            try:
                t, line = self.lines.get_nowait()
            except queue.Empty:
                return out
            if line is None:
                raise self._closed()
            out.append((t, line))

    def sync(self, timeout=60.0):
        """`isready` -> `readyok`; returns the lines before it."""
        return self.until(lambda l: l == "readyok", timeout, send="isready")[2]

    def uci(self, options=None):
        """The `uci` handshake, then `setoption` for each of `options` and `isready`. Raises if
        the engine answers with an `info string` naming one of the options (Madhouse's way of
        refusing a value and keeping the old one), so that no measurement runs, and is labelled,
        with a setting the engine did not take."""
        self.until(lambda l: l == "uciok", send="uci")
        for name, value in (options or {}).items():
            self.send(f"setoption name {name} value {value}")
        refused = [l for l in self.sync()
                   if l.startswith("info string") and any(str(n) in l for n in (options or {}))]
        if refused:
            raise RuntimeError(f"the engine refused an option: {refused[0]}")

    def perft(self, position, depth, timeout=600.0):
        """`position` (a full `position ...` command) and `go perft depth`: returns
        (nodes, seconds, the `move: count` lines). Raises if the engine refuses the position."""
        self.send(position)
        t0 = self.send(f"go perft {depth}")
        t, line, before = self.until(lambda l: l.strip().startswith("Nodes searched"), timeout)
        refused = [l for l in before if l.startswith("info string")]
        if refused:
            raise RuntimeError(f"the engine refused '{position}': {refused[0]}")
        nodes = int(line.split(":")[1])
        divide = [l for l in before if ":" in l and not l.startswith("info")]
        return nodes, t - t0, divide

    def legal_moves(self, position):
        """The legal moves in `position`, from the engine's `go perft 1` divide."""
        return [l.split(":")[0].strip() for l in self.perft(position, 1)[2]]

    def quit(self):
        """`quit`, then kill the process if it does not exit within 5 s."""
        try:
            self.send("quit")
            self.proc.wait(timeout=5)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        # Everything the engine wrote to stderr is in `self.stderr` once quit returns.
        self._err_reader.join(timeout=5)
