# tinygrad's LLM app (python -m tinygrad.llm) as the tinygrad-llm program: DEV=NV unless DEV is set, and --host for --serve,
# whose server upstream binds to every interface
import argparse, os, socket, sys
os.environ.setdefault("DEV", "NV")
import tinygrad.llm.cli as cli

parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
parser.add_argument("--host", default="", help="address --serve binds (default: every interface)")
args, sys.argv[1:] = parser.parse_known_args()

class LLMServer(cli.LLMServer):
  address_family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
  def __init__(self, address, *rest): super().__init__((args.host, address[1]), *rest)

cli.LLMServer = LLMServer
cli.main()
