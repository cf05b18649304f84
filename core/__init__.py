"""webshelf's core: the extract pipeline, read_file and configuration.

    from core import web_extract_sync, read_file
    results = web_extract_sync(["https://peps.python.org/pep-0008/"])
    print(results[0].content)             # whole page, or head/tail windows + footer
    print(read_file(results[0].path, offset=200, limit=100))
"""

from core.config import Config, load_config
from core.errors import WebshelfError
from core.extract import web_extract, web_extract_sync
from core.models import ErrorInfo, ExtractResult
from core.read import read_file

__all__ = [
    "Config", "ErrorInfo", "ExtractResult", "WebshelfError",
    "load_config", "read_file", "web_extract", "web_extract_sync",
]
