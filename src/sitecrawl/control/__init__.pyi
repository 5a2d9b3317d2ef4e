# The public names of sitecrawl.control, each once (its __init__.py serves them lazily).

from ._links import LinkTargets as LinkTargets
from ._links import TrapGuard as TrapGuard
from ._rules import LinkRules as LinkRules
from ._rules import Rules as Rules
from ._rules import ScopeKind as ScopeKind
from ._scope import CrawlScope as CrawlScope
from ._scope import default_scope as default_scope
from ._scope import url_path as url_path
