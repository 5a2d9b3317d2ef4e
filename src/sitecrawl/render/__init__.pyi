# The public names of sitecrawl.render, each once (its __init__.py serves them lazily).

from ._browser import find_browser as find_browser
from ._renderer import Renderer as Renderer
from ._renderer import save_screenshot as save_screenshot
from ._renderer import thumbnail_path as thumbnail_path
