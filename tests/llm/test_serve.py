# tinygrad/llm/serve.py as a user runs it: `python -m tinygrad.llm --model SmolLM2.gguf --serve PORT` on the CPU, one server for
# this module, answered by the official openai client, refusing bad requests with OpenAI's error body, and its chat page in Chromium
import http.client, json, os, re, socket, subprocess, sys, time
import pytest
from openai import OpenAI
from chromium import Chromium

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]
PROMPT_TOKENS = 37   # QUESTION in SmolLM2's chat template, with its system prompt
STORY = [{"role": "user", "content": "Write a long story about a dragon."}]
pytestmark = pytest.mark.xdist_group("llm_serve")   # one server for the module: its tests on one worker

@pytest.fixture(scope="module")
def server(smollm2_path, tmp_path_factory):
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
  log = tmp_path_factory.mktemp("serve") / "stderr"
  with open(log, "w") as err:
    proc = subprocess.Popen([sys.executable, "-m", "tinygrad.llm", "--model", str(smollm2_path), "--max_context", "128", "--serve", str(port)],
                            stdout=subprocess.DEVNULL, stderr=err, env={**os.environ, "DEV": "CPU"})
  try:
    for _ in range(1200):   # loading and the JIT's warmup
      assert proc.poll() is None, log.read_text()[-2000:]
      with socket.socket() as s:
        if s.connect_ex(("127.0.0.1", port)) == 0: break
      time.sleep(0.5)
    yield port, log
  finally:
    proc.terminate()
    proc.wait()

@pytest.fixture(scope="module")
def client(server) -> OpenAI: return OpenAI(base_url=f"http://127.0.0.1:{server[0]}/v1", api_key="none", max_retries=20)

def post(port:int, body, path="/v1/chat/completions", method="POST") -> tuple[int, dict]:
  conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
  conn.request(method, path, body if isinstance(body, str) else json.dumps(body), {"Content-Type": "application/json"})
  resp = conn.getresponse()
  return resp.status, json.loads(resp.read())

def test_answers_paris(client):
  r = client.chat.completions.create(model="smollm2", messages=QUESTION, max_tokens=16)
  assert "Paris" in r.choices[0].message.content and r.choices[0].finish_reason == "stop"
  assert r.usage.prompt_tokens == PROMPT_TOKENS and r.usage.total_tokens == PROMPT_TOKENS + r.usage.completion_tokens
  chunks = list(client.chat.completions.create(model="smollm2", messages=QUESTION, max_tokens=16, stream=True,
                                               stream_options={"include_usage": True}))
  assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == r.choices[0].message.content
  assert chunks[-1].usage.prompt_tokens == PROMPT_TOKENS and chunks[-1].usage.completion_tokens == r.usage.completion_tokens

def test_max_tokens(client):
  r = client.chat.completions.create(model="smollm2", messages=QUESTION, max_tokens=3)
  assert (r.choices[0].message.content, r.choices[0].finish_reason) == ("The capital of", "length")
  assert (r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.total_tokens) == (PROMPT_TOKENS, 3, PROMPT_TOKENS + 3)

@pytest.mark.parametrize("stream", [False, True])
def test_stop(client, stream):
  # "France is Pa" spans three tokens: streamed, " France" and " is" are held back until " Paris" shows the stop
  r = client.chat.completions.create(model="smollm2", messages=QUESTION, max_tokens=16, stop=["London", "France is Pa"], stream=stream)
  if stream:
    chunks = list(r)
    text, finish = "".join(c.choices[0].delta.content or "" for c in chunks), chunks[-1].choices[0].finish_reason
  else: text, finish = r.choices[0].message.content, r.choices[0].finish_reason
  assert (text, finish) == ("The capital of ", "stop")

def test_models_list(client):
  assert [(m.id, type(m.created), m.owned_by) for m in client.models.list()] == [("Smollm2 135M 8k Lc100K Mix1 Ep2", int, "tinygrad")]

@pytest.mark.parametrize("method, path, body, status, param", [
  ("POST", "/v1/chat/completions", "{not json", 400, None),
  ("POST", "/v1/chat/completions", {"model": "x"}, 400, "messages"),
  ("POST", "/v1/chat/completions", {"messages": QUESTION, "max_tokens": 0}, 400, "max_tokens"),
  ("POST", "/v1/chat/completions", {"messages": QUESTION, "n": 2}, 400, "n"),
  ("POST", "/v1/chat/completions", {"messages": QUESTION, "logprobs": True}, 400, "logprobs"),
  ("POST", "/v1/chat/completions", {"messages": QUESTION, "stop": 5}, 400, "stop"),
  ("POST", "/v1/completions", {"prompt": "hi"}, 404, None),
  ("GET", "/v1/nothing", "", 404, None)])
def test_bad_requests(server, method, path, body, status, param):
  got, err = post(server[0], body, path, method)
  assert got == status and err["error"]["param"] == param and err["error"]["type"] == "invalid_request_error" and err["error"]["message"]

def test_listens_on_loopback(server):
  # /proc/net/tcp: local address as little-endian hex, 0100007F is 127.0.0.1; state 0A is LISTEN
  rows = [r.split() for f in ("/proc/net/tcp", "/proc/net/tcp6") for r in open(f).read().splitlines()[1:]]
  assert [r[1].split(":")[0] for r in rows if r[3] == "0A" and int(r[1].split(":")[1], 16) == server[0]] == ["0100007F"]

def outs(log, start:int) -> list[int]: return [int(n) for n in re.findall(r"out:\s*(\d+)", log.read_text()[start:])]

def test_busy_then_disconnect(server, client):
  port, log = server
  start = len(log.read_text())
  a = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
  a.request("POST", "/v1/chat/completions", json.dumps({"model": "smollm2", "messages": STORY, "max_tokens": 64, "stream": True}), {"Content-Type": "application/json"})
  resp = a.getresponse()
  assert resp.readline().startswith(b"data: ")   # generating for this client now
  # the model is busy: a second chat is refused at once, the model list still answered
  assert post(port, {"model": "smollm2", "messages": QUESTION})[0] == 503
  assert post(port, "", "/v1/models", "GET")[0] == 200
  resp.close()   # the response holds the socket open
  a.close()
  # served once the first stops (the client retries the 503s), the first having stopped when its client left
  assert "Paris" in client.chat.completions.create(model="smollm2", messages=QUESTION, max_tokens=16).choices[0].message.content
  assert outs(log, start)[0] < 64

def test_disconnect_before_reply(server, client):
  port, log = server
  start = len(log.read_text())
  with socket.create_connection(("127.0.0.1", port)) as s:
    body = json.dumps({"model": "smollm2", "messages": STORY, "max_tokens": 64}).encode()
    s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
  assert "Paris" in client.chat.completions.create(model="smollm2", messages=QUESTION, max_tokens=16).choices[0].message.content
  assert outs(log, start)[0] < 64

def wait_for(page:Chromium, cond, ok_status=(200,)) -> str:
  # polls the page's text until cond holds on it; an exception on the page or a request answered otherwise fails at once
  deadline = time.monotonic() + 300
  while not cond(text:=page.eval("document.body.innerText")):
    for e in page.pending():
      if e.get("method") == "Runtime.exceptionThrown":
        raise AssertionError(f"the page threw {(d:=e['params']['exceptionDetails']).get('exception', {}).get('description', d['text'])}")
      if e.get("method") == "Network.responseReceived" and e["params"]["type"] == "Fetch":   # the page's requests
        assert (res:=e["params"]["response"])["status"] in ok_status, f"{res['url']} answered {res['status']}"
    assert time.monotonic() < deadline, f"not there in 300 s, the page shows {text!r}"
    time.sleep(0.1)
  return text

def test_chat_page(server, tmp_path):
  # as a user in a browser: click the input, type the question, press Enter, read the reply as it streams in
  with Chromium(tmp_path/"chromium") as page:
    page.open(f"http://127.0.0.1:{server[0]}/?temperature=0")   # greedy: the reply the openai client gets
    page.click("textarea")
    page.type(question:=QUESTION[0]["content"])
    page.enter()
    def replied(text:str, want="The capital of France is Paris.") -> bool:
      assert want.startswith(shown:=text.partition(question)[2].strip()), f"the page shows {shown!r}"
      return shown == want
    wait_for(page, replied)

def test_chat_page_busy(server, tmp_path):
  # a question sent while a reply streams gets the server's reason on the page, and the reply above it goes on streaming
  with Chromium(tmp_path/"chromium") as page:
    page.open(f"http://127.0.0.1:{server[0]}/?temperature=0")
    page.click("textarea")
    page.type(story:=STORY[0]["content"])
    page.enter()
    wait_for(page, lambda t: t.partition(story)[2].strip() != "")
    page.type(question:=QUESTION[0]["content"])
    page.enter()
    busy = (200, 503)
    text = wait_for(page, lambda t: "the model is answering another request" in t.partition(question)[2], busy)
    wait_for(page, lambda t: len(t.partition(question)[0]) > len(text.partition(question)[0]), busy)
