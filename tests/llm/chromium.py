# Debian's headless Chromium driven over the DevTools protocol with the standard library: --remote-debugging-pipe reads commands
# from fd 3 and writes replies and events to fd 4, each a JSON message ended by a NUL (chromedevtools.github.io/devtools-protocol)
import json, os, pathlib, select, shutil, subprocess

class Chromium:
  def __init__(self, profile:pathlib.Path, timeout:float=60):
    assert (exe:=shutil.which("chromium")), "chromium is not installed: scripts/setup installs Debian's chromium package"
    cmd_r, self.cmd_w = os.pipe()
    self.out_r, out_w = os.pipe()
    args = ["--headless", "--remote-debugging-pipe", f"--user-data-dir={profile}", "--no-first-run", "--disable-gpu",
            *(["--no-sandbox"] if os.geteuid() == 0 else []), "about:blank"]   # its sandbox refuses to run as root
    self.log = profile.with_suffix(".log")
    with open(self.log, "w") as err:
      # the pipes go in as stdin and stdout, the shell moves them to fds 3 and 4
      self.proc = subprocess.Popen(["sh", "-c", 'exec "$@" 3<&0 4>&1 0</dev/null 1>&2', "sh", exe, *args], stdin=cmd_r, stdout=out_w, stderr=err)
    for fd in (cmd_r, out_w): os.close(fd)
    self.timeout, self.buf, self.events, self.last_id, self.session = timeout, b"", [], 0, None
    try:
      page = next(t for t in self.send("Target.getTargets")["targetInfos"] if t["type"] == "page")
      self.session = self.send("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
      for domain in ("Page", "Runtime", "Network"): self.send(f"{domain}.enable")
    except BaseException:
      self.close()
      raise

  def recv(self, timeout:float) -> dict|None:
    while b"\0" not in self.buf:
      if not select.select([self.out_r], [], [], timeout)[0]: return None
      assert (data:=os.read(self.out_r, 1 << 20)), f"chromium exited: {self.log.read_text()[-2000:]}"
      self.buf += data
    msg, self.buf = self.buf.split(b"\0", 1)
    return json.loads(msg)

  def send(self, method:str, **params) -> dict:
    self.last_id += 1
    os.write(self.cmd_w, json.dumps({"id":self.last_id, "method":method, "params":params,
                                     **({"sessionId":self.session} if self.session else {})}).encode() + b"\0")
    while (msg:=self.recv(self.timeout)) is None or msg.get("id") != self.last_id:
      assert msg is not None, f"chromium did not answer {method} in {self.timeout} s"
      self.events.append(msg)
    assert "error" not in msg, f"{method}: {msg['error']}"
    return msg["result"]

  def pending(self) -> list[dict]:
    while (msg:=self.recv(0)) is not None: self.events.append(msg)
    events, self.events = self.events, []
    return events

  def eval(self, js:str):
    r = self.send("Runtime.evaluate", expression=js, returnByValue=True)
    assert "exceptionDetails" not in r, r["exceptionDetails"]
    return r["result"].get("value")

  def open(self, url:str):
    self.pending()
    self.send("Page.navigate", url=url)
    while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
      assert (msg:=self.recv(self.timeout)) is not None, f"{url} did not load in {self.timeout} s"
      self.events.append(msg)

  def click(self, selector:str):
    x, y = self.eval(f"(r => [r.x + r.width/2, r.y + r.height/2])(document.querySelector({json.dumps(selector)}).getBoundingClientRect())")
    for t in ("mousePressed", "mouseReleased"): self.send("Input.dispatchMouseEvent", type=t, x=x, y=y, button="left", clickCount=1)

  def type(self, text:str):
    for c in text:
      self.send("Input.dispatchKeyEvent", type="keyDown", text=c, key=c)
      self.send("Input.dispatchKeyEvent", type="keyUp", key=c)

  def enter(self):
    self.send("Input.dispatchKeyEvent", type="keyDown", key="Enter", code="Enter", windowsVirtualKeyCode=13, text="\r")
    self.send("Input.dispatchKeyEvent", type="keyUp", key="Enter", code="Enter", windowsVirtualKeyCode=13)

  def close(self):
    os.close(self.cmd_w)   # the browser exits when its command pipe closes
    try: self.proc.wait(10)
    except subprocess.TimeoutExpired: self.proc.kill(); self.proc.wait()
    os.close(self.out_r)
  def __enter__(self): return self
  def __exit__(self, *exc): self.close()
