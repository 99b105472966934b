#!/usr/bin/python3
"""Loads an HTML page in headless Chromium, offline, and reports what a person would see.

    browser_check.py PAGE.html [--count SELECTOR]... [--attr SELECTOR ATTR]...
                     [--text SELECTOR]... [--click SELECTOR]... [--no-scripts]
                     [--screenshot FILE.png] [--pdf FILE.pdf] [--width PX]
                     [--settle MS] [--timeout S] [--strict] [--verbose]
                     [--chromium PATH]

The page is loaded from disk (file://) with the network off: every request
but the page's own is failed and recorded (a self-contained page requests
nothing; inline data: URLs never leave the renderer). After the load event
and a short settle (--settle, default 250 ms, for the page's timers), each
--click is dispatched in order (a real mouse click at the element's centre,
scrolled into view; the element's click() when the mouse cannot reach it),
then the --count, --attr and --text checks are evaluated through the DOM.
--no-scripts loads the page with script execution disabled, to see what
shows without scripts.

One JSON object goes to stdout:

    {"url": "file:///...", "title": "...",
     "console": [{"level": "error" or "warning", "text": "...",
                  "source": "console", "javascript", "network", ..., "url": "..."}],
     "exceptions": [{"text": "...", "url": "...", "line": N, "column": N}],
     "blocked_requests": ["http://...", ...],
     "counts": {SELECTOR: N},
     "attrs": {SELECTOR: {ATTR: [value or null, ...]}},
     "texts": {SELECTOR: [textContent, whitespace collapsed, ...]},
     "clicks": [{"selector": "...", "method": "mouse" or "element.click()" or null,
                 "error": "no element matches" (only then)}],
     "screenshot": {"file": "...", "width": N, "height": N},   (with --screenshot)
     "pdf": {"file": "...", "bytes": N}}                       (with --pdf)

Exit status: 0 when the page loaded and the checks were evaluated, whatever
they found; 1 with --strict when the page logged a console error, threw, made
a request, or a --click found no element; 2 on bad usage (an unreadable page,
an invalid selector, an unwritable output file) or when Chromium could not
start or the run outlasted --timeout (default 60 s); 128+N when stopped by
signal N. Chromium's own output (D-Bus and GPU noise) goes to stderr only
with --verbose; its tail is shown when it fails.

Chromium runs in a session of its own, with its profile, HOME and TMPDIR in a
temporary directory; on every way out its processes are killed and reaped
(this script is their subreaper, so its double-forked crash handler too) and
the directory is removed. Standard library only: the DevTools protocol is
spoken over --remote-debugging-pipe (commands to Chromium's fd 3, replies and
events from its fd 4, each message JSON ended by a NUL byte).
"""

import argparse
import base64
import ctypes
import fcntl
import json
import math
import os
import pathlib
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse

MAX_SCREENSHOT_HEIGHT = 16000
VIEWPORT_HEIGHT = 800
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Failure(Exception):
    """Chromium could not start, answer in time or load the page: exit 2."""


class UsageError(Exception):
    """The command line asked for something that cannot be checked: exit 2."""


class Stopped(Exception):
    """A signal asked us to stop: exit 128+signum."""

    def __init__(self, signum):
        super().__init__(f"stopped by signal {signum}")
        self.signum = signum


class ProtocolError(Exception):
    """Chromium answered a command with an error."""

    def __init__(self, method, error):
        super().__init__(f"{method}: {error.get('message')} {error.get('data', '')}".strip())


# ---------------------------------------------------------------- arguments

def parse_args(argv):
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Exit 0: checked; 1: findings, with --strict; 2: bad usage, Chromium failed or timed out.")
    p.add_argument("page", help="the HTML file to load")
    p.add_argument("--count", action="append", default=[], metavar="SELECTOR",
                   help="report how many elements match")
    p.add_argument("--attr", action="append", default=[], nargs=2, metavar=("SELECTOR", "ATTR"),
                   help="report ATTR of every matching element")
    p.add_argument("--text", action="append", default=[], metavar="SELECTOR",
                   help="report the text of every matching element")
    p.add_argument("--click", action="append", default=[], metavar="SELECTOR",
                   help="click the first matching element (in order, before the checks)")
    p.add_argument("--no-scripts", action="store_true", help="load with script execution disabled")
    p.add_argument("--screenshot", metavar="FILE.png", help="write a full-page PNG")
    p.add_argument("--pdf", metavar="FILE.pdf", help="print the page to a PDF")
    p.add_argument("--width", type=int, default=1280, metavar="PX",
                   help="viewport width in CSS pixels (default 1280)")
    p.add_argument("--settle", type=int, default=250, metavar="MS",
                   help="time after the load event, and after the clicks, for timers to run (default 250)")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S",
                   help="overall time limit in seconds (default 60)")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 on console errors, exceptions, requests, or clicks that found nothing")
    p.add_argument("--verbose", action="store_true", help="pass Chromium's stderr through")
    p.add_argument("--chromium", default=os.environ.get("CHROMIUM", "chromium"), metavar="PATH",
                   help="the browser (default: $CHROMIUM, else chromium on PATH)")
    args = p.parse_args(argv)
    if not 100 <= args.width <= 10000:
        p.error("--width must be between 100 and 10000")
    if args.timeout <= 0 or args.settle < 0:
        p.error("--timeout must be positive and --settle not negative")
    page = pathlib.Path(args.page)
    if not page.is_file() or not os.access(page, os.R_OK):
        p.error(f"{args.page}: not a readable file")
    args.url = page.resolve().as_uri()
    if shutil.which(args.chromium) is None:
        p.error(f"{args.chromium}: not found (Debian's chromium package)")
    return args


# ----------------------------------------------------------------- Chromium

def chromium_command(binary, profile, width):
    return [
        binary, "--headless=new", "--no-sandbox", "--disable-gpu",
        f"--user-data-dir={profile}", "--no-first-run", "--no-default-browser-check",
        "--disable-extensions", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--disable-default-apps", "--disable-dev-shm-usage",
        "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
        "--disable-backgrounding-occluded-windows", "--password-store=basic",
        "--hide-scrollbars", "--mute-audio", f"--window-size={width},{VIEWPORT_HEIGHT}",
        "--remote-debugging-pipe", "about:blank",
    ]


def high_copy(fd):
    """fd moved to a number of 10 or more (close-on-exec), so that the child's dup2 onto 3 and 4
    cannot overwrite one pipe end with the other."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


class Browser:
    """A headless Chromium in a session of its own, its files in a temporary directory."""

    def __init__(self, args):
        self.args = args
        self.proc = None
        self.dir = tempfile.mkdtemp(prefix="rxerun-browser-")
        self.log_path = os.path.join(self.dir, "chromium.log")

    def start(self):
        """Starts Chromium; returns the pipe ends to write commands to and to read replies from."""
        home, tmp = os.path.join(self.dir, "home"), os.path.join(self.dir, "tmp")
        os.mkdir(home)
        os.mkdir(tmp)
        env = dict(os.environ, HOME=home, TMPDIR=tmp, XDG_CONFIG_HOME=f"{home}/.config",
                   XDG_CACHE_HOME=f"{home}/.cache")
        commands_r, commands_w = os.pipe()
        replies_r, replies_w = os.pipe()
        child_in, child_out = high_copy(commands_r), high_copy(replies_w)

        # pass_fds would keep the pipe ends under their own numbers, and Chromium wants them as fd 3
        # and 4: the child renumbers them between fork and exec. close_fds=False lets through only
        # what is inheritable: these two and the standard streams (Python opens the rest close-on-exec).
        def in_child():
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)

        log = None if self.args.verbose else open(self.log_path, "wb")
        try:
            self.proc = subprocess.Popen(
                chromium_command(self.args.chromium, os.path.join(self.dir, "profile"), self.args.width),
                stdin=subprocess.DEVNULL, stdout=log or sys.stderr, stderr=log or sys.stderr,
                env=env, start_new_session=True, close_fds=False, preexec_fn=in_child)
        except OSError as e:
            raise Failure(f"cannot run {self.args.chromium}: {e}") from e
        finally:
            os.close(child_in)
            os.close(child_out)
            if log:
                log.close()
        return commands_w, replies_r

    def log_tail(self, lines=15):
        """The end of Chromium's stderr, without its complaints about the missing D-Bus."""
        try:
            text = pathlib.Path(self.log_path).read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join([line for line in text.splitlines() if ":ERROR:dbus/" not in line][-lines:])

    def stop(self):
        """Kills every process Chromium started, reaps them all, removes the directory."""
        for signum in STOP_SIGNALS:  # a second Ctrl-C must not cut this short
            signal.signal(signum, signal.SIG_IGN)
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        reap_descendants()
        shutil.rmtree(self.dir, ignore_errors=True)


def become_subreaper():
    """Makes the processes Chromium leaves orphaned (its crash handler double-forks into a session of
    its own) our children instead of init's, so that we can kill and reap every one of them."""
    try:
        pr_set_child_subreaper = 36
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_child_subreaper, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the process group is all we kill


def children():
    """Our children's pids, read from /proc."""
    me, found = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = pathlib.Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        if int(stat[stat.rindex(b")") + 2:].split()[1]) == me:
            found.append(int(entry))
    return found


def reap_descendants(limit=10.0):
    """SIGKILLs and reaps our children until there are none left: as their subreaper, that means
    nothing Chromium started still runs."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        for pid in children():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return
        time.sleep(0.01)


# --------------------------------------------------------- DevTools protocol

class Cdp:
    """The DevTools protocol over a pipe pair: call() waits for a command's reply, meanwhile
    handing every event to on_event(method, params, session)."""

    def __init__(self, write_fd, read_fd, timeout, on_event):
        self.write_fd, self.read_fd = write_fd, read_fd
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.on_event = on_event
        self.next_id = 0
        self.partial = []
        self.replies = {}

    def send(self, method, params=None, session=None):
        """Sends a command without waiting for its reply; returns its id."""
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self.write_fd, data):]
        except BrokenPipeError as e:
            raise Failure("Chromium closed its DevTools pipe (it exited)") from e
        return self.next_id

    def call(self, method, params=None, session=None):
        """Sends a command and returns its result; raises ProtocolError if it failed."""
        wanted = self.send(method, params, session)
        while wanted not in self.replies:
            self.read(self.deadline - time.monotonic(), f"the reply to {method}")
        reply = self.replies.pop(wanted)
        if "error" in reply:
            raise ProtocolError(method, reply["error"])
        return reply.get("result", {})

    def wait_for(self, done, what):
        """Handles events until done() holds."""
        while not done():
            self.read(self.deadline - time.monotonic(), what)

    def handle_for(self, seconds):
        """Handles the events of the next few seconds."""
        end = min(time.monotonic() + seconds, self.deadline)
        while time.monotonic() < end:
            self.read(end - time.monotonic(), None)

    def read(self, timeout, what):
        """Reads what Chromium wrote within timeout; a Failure if nothing came and `what` was awaited."""
        ready = timeout > 0 and select.select([self.read_fd], [], [], timeout)[0]
        if not ready:
            if what:
                raise Failure(f"no answer within --timeout {self.timeout:g} s: waiting for {what}")
            return
        chunk = os.read(self.read_fd, 1 << 20)
        if not chunk:
            raise Failure("Chromium closed its DevTools pipe (it exited)")
        self.partial.append(chunk)
        if b"\0" not in chunk:
            return
        *messages, rest = b"".join(self.partial).split(b"\0")
        self.partial = [rest]
        for raw in messages:
            self.dispatch(json.loads(raw))

    def dispatch(self, message):
        if "id" in message:
            self.replies[message["id"]] = message
        else:
            self.on_event(message.get("method"), message.get("params", {}), message.get("sessionId"))


# ------------------------------------------------------------- the page

def same_document(url, page_url):
    """Whether url is the page's own (Chromium and Python escape file URLs differently)."""
    def plain(u):
        return urllib.parse.unquote(u.split("#")[0])
    return plain(url) == plain(page_url)


def remote_text(obj):
    """A console argument as the console shows it."""
    if "value" in obj:
        return obj["value"] if isinstance(obj["value"], str) else json.dumps(obj["value"])
    return obj.get("description") or obj.get("unserializableValue") or obj.get("type", "")


class Page:
    """What happened on the page: its console, exceptions, requests and load."""

    CONSOLE_LEVELS = {"error": "error", "assert": "error", "warning": "warning"}

    def __init__(self, url):
        self.url = url
        self.cdp = self.session = None
        self.console, self.exceptions, self.blocked = [], [], []
        self.navigated = self.loaded = False

    def on_event(self, method, params, session):
        if session != self.session:
            return
        handler = {
            "Fetch.requestPaused": self.request_paused,
            "Runtime.consoleAPICalled": self.console_called,
            "Log.entryAdded": self.log_entry,
            "Runtime.exceptionThrown": self.exception_thrown,
            "Page.frameNavigated": self.frame_navigated,
            "Page.loadEventFired": self.load_fired,
        }.get(method)
        if handler:
            handler(params)

    def request_paused(self, params):
        url, request = params["request"]["url"], {"requestId": params["requestId"]}
        if same_document(url, self.url):
            self.cdp.send("Fetch.continueRequest", request, self.session)
        else:
            self.blocked.append(url)
            self.cdp.send("Fetch.failRequest", dict(request, errorReason="BlockedByClient"), self.session)

    def console_called(self, params):
        level = self.CONSOLE_LEVELS.get(params.get("type"))
        if level:
            frames = params.get("stackTrace", {}).get("callFrames", [])
            text = " ".join(remote_text(arg) for arg in params.get("args", []))
            self.console.append({"level": level, "text": text, "source": "console",
                                 "url": frames[0]["url"] if frames else ""})

    def log_entry(self, params):
        entry = params["entry"]
        if entry.get("level") in ("error", "warning"):
            self.console.append({"level": entry["level"], "text": entry.get("text", ""),
                                 "source": entry.get("source", ""), "url": entry.get("url", "")})

    def exception_thrown(self, params):
        details = params["exceptionDetails"]
        self.exceptions.append({
            "text": details.get("exception", {}).get("description") or details.get("text", ""),
            "url": details.get("url", ""),
            "line": details.get("lineNumber", 0) + 1, "column": details.get("columnNumber", 0) + 1})

    def frame_navigated(self, params):
        frame = params["frame"]
        if "parentId" not in frame and same_document(frame.get("url", ""), self.url):
            self.navigated = True

    def load_fired(self, _params):
        self.loaded = self.navigated  # not the about:blank the tab opened with


def open_page(cdp, page, args):
    """A new tab, watched and offline, with the page loaded in it and settled."""
    target = cdp.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    page.session = s = cdp.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Runtime", "Log", "Page", "Network"):
        cdp.call(f"{domain}.enable", {}, s)
    cdp.call("Fetch.enable", {"patterns": [{"urlPattern": "*"}]}, s)
    go_offline(cdp, s)
    cdp.call("Emulation.setDeviceMetricsOverride",
             {"width": args.width, "height": VIEWPORT_HEIGHT, "deviceScaleFactor": 1, "mobile": False}, s)
    if args.no_scripts:
        cdp.call("Emulation.setScriptExecutionDisabled", {"value": True}, s)
    result = cdp.call("Page.navigate", {"url": page.url}, s)
    if result.get("errorText"):
        raise Failure(f"cannot load {page.url}: {result['errorText']}")
    cdp.wait_for(lambda: page.loaded, "the page's load event")
    cdp.handle_for(args.settle / 1000)


def go_offline(cdp, session):
    offline = {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
    try:
        cdp.call("Network.emulateNetworkConditions", offline, session)
    except ProtocolError:  # should a later Chromium drop it: its successor
        cdp.call("Network.overrideNetworkState", offline, session)


def evaluate(cdp, session, expression):
    """The value of a JavaScript expression in the page (this runs even with the page's scripts
    disabled); a ProtocolError if it threw."""
    result = cdp.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                           "awaitPromise": True}, session)
    if "exceptionDetails" in result:
        details = result["exceptionDetails"]
        message = details.get("exception", {}).get("description") or details.get("text", "exception")
        raise ProtocolError("Runtime.evaluate", {"message": message})
    return result["result"].get("value")


LOCATE = """(() => {
  const el = document.querySelector(%s);
  if (!el) return null;
  el.scrollIntoView({block: "center", inline: "center"});
  const r = el.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
  const hit = document.elementFromPoint(x, y);
  return {x, y, reachable: r.width > 0 && r.height > 0 && !!hit && (hit === el || el.contains(hit))};
})()"""


def click(cdp, session, selector, scripts):
    """Clicks the first element matching selector: with the mouse where it can reach it (the element
    is visible and on top at its centre), else with the element's click()."""
    spot = evaluate(cdp, session, LOCATE % json.dumps(selector))
    if spot is None:
        return {"selector": selector, "method": None, "error": "no element matches"}
    if spot["reachable"]:
        for kind, button in (("mouseMoved", "none"), ("mousePressed", "left"), ("mouseReleased", "left")):
            cdp.call("Input.dispatchMouseEvent", {"type": kind, "x": spot["x"], "y": spot["y"],
                                                  "button": button, "clickCount": 1}, session)
        method = "mouse"
    else:
        evaluate(cdp, session, "document.querySelector(%s).click()" % json.dumps(selector))
        method = "element.click()"
    if scripts:  # the handler's follow-ups (timers of 0 ms) run; without scripts no timer fires
        evaluate(cdp, session, "new Promise(r => setTimeout(r, 0))")
    return {"selector": selector, "method": method}


CHECKS = """((spec) => {
  const all = (s) => Array.from(document.querySelectorAll(s));
  const text = (e) => (e.textContent || "").replace(/\\s+/g, " ").trim();
  const out = {counts: {}, attrs: {}, texts: {}, title: document.title};
  for (const s of spec.counts) out.counts[s] = all(s).length;
  for (const [s, a] of spec.attrs) (out.attrs[s] = out.attrs[s] || {})[a] = all(s).map((e) => e.getAttribute(a));
  for (const s of spec.texts) out.texts[s] = all(s).map(text);
  return out;
})(%s)"""


def screenshot(cdp, session, path):
    """The whole page (up to MAX_SCREENSHOT_HEIGHT) as a PNG file; returns its size."""
    size = cdp.call("Page.getLayoutMetrics", {}, session)["cssContentSize"]
    clip = {"x": 0, "y": 0, "width": max(1, math.ceil(size["width"])),
            "height": max(1, min(math.ceil(size["height"]), MAX_SCREENSHOT_HEIGHT)), "scale": 1}
    png = base64.b64decode(cdp.call("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True, "clip": clip}, session)["data"])
    pathlib.Path(path).write_bytes(png)
    width, height = struct.unpack(">II", png[16:24])
    return {"file": path, "width": width, "height": height}


def print_pdf(cdp, session, path):
    data = base64.b64decode(cdp.call("Page.printToPDF", {"printBackground": True}, session)["data"])
    pathlib.Path(path).write_bytes(data)
    return {"file": path, "bytes": len(data)}


def inspect(cdp, page, args):
    """Loads the page, clicks, evaluates the checks: the report."""
    open_page(cdp, page, args)
    s = page.session
    try:
        clicks = [click(cdp, s, selector, not args.no_scripts) for selector in args.click]
    except ProtocolError as e:
        raise UsageError(f"cannot click (an invalid selector?): {e}") from e
    if clicks:
        cdp.handle_for(args.settle / 1000)
    try:
        spec = {"counts": args.count, "attrs": args.attr, "texts": args.text}
        checks = evaluate(cdp, s, CHECKS % json.dumps(spec))
    except ProtocolError as e:
        raise UsageError(f"cannot evaluate the checks (an invalid selector?): {e}") from e
    report = {"url": page.url, "title": checks["title"], "console": page.console,
              "exceptions": page.exceptions, "blocked_requests": page.blocked,
              "counts": checks["counts"], "attrs": checks["attrs"], "texts": checks["texts"],
              "clicks": clicks}
    if args.screenshot:
        report["screenshot"] = screenshot(cdp, s, args.screenshot)
    if args.pdf:
        report["pdf"] = print_pdf(cdp, s, args.pdf)
    return report


# ------------------------------------------------------------------ main

def findings(report):
    """What --strict fails on."""
    errors = [m for m in report["console"] if m["level"] == "error"]
    missed = [c for c in report["clicks"] if c.get("error")]
    return errors or report["exceptions"] or report["blocked_requests"] or missed


def stop_on_signal(signum, _frame):
    raise Stopped(signum)


def run(args):
    """The report, Chromium gone; raises Failure, UsageError, OSError or Stopped."""
    browser = None
    try:
        browser = Browser(args)
        commands, replies = browser.start()
        try:
            page = Page(args.url)
            page.cdp = Cdp(commands, replies, args.timeout, page.on_event)
            return inspect(page.cdp, page, args)
        finally:
            os.close(commands)
            os.close(replies)
    except (Failure, ProtocolError) as e:
        tail = browser.log_tail() if browser else ""
        raise Failure(f"{e}\n--- the end of Chromium's stderr\n{tail}" if tail else str(e)) from e
    finally:
        if browser:
            browser.stop()


def main(argv):
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, stop_on_signal)
    signal.signal(signal.SIGHUP, stop_on_signal)
    become_subreaper()
    try:
        report = run(args)
    except (Failure, UsageError, OSError) as e:
        print(f"browser_check: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    except Stopped as e:
        return 128 + e.signum
    json.dump(report, sys.stdout, indent=1)
    print()
    return 1 if args.strict and findings(report) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
