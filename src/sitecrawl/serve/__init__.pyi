# The public names of sitecrawl.serve, each once (its __init__.py serves them lazily).

from ._app import build_app as build_app
from ._config import DEFAULT_MAX_CRAWLS as DEFAULT_MAX_CRAWLS
from ._config import DEFAULT_PORT as DEFAULT_PORT
from ._config import ServeConfig as ServeConfig
from ._crawls import CrawlManager as CrawlManager
from ._mcp import mcp_server as mcp_server
from ._mcp_http import McpHttp as McpHttp
from ._mcp_http import mcp_asgi_app as mcp_asgi_app
from ._monitor import MonitorService as MonitorService
from ._monitor_routes import monitor_routes as monitor_routes
from ._options import OptionError as OptionError
from ._options import config_from_options as config_from_options
