# tinygrad's LLM app (python -m tinygrad.llm) as the tinygrad-llm program: DEV=NV unless DEV is set
import os
os.environ.setdefault("DEV", "NV")
import tinygrad.llm.cli as cli
cli.main()
