# The public names of sitecrawl.fetch, each once (its __init__.py serves them lazily).

from ._addresses import CLASS_NAMES as CLASS_NAMES
from ._addresses import PUBLIC as PUBLIC
from ._addresses import address_class as address_class
from ._alternates import link_alternates as link_alternates
from ._alternates import merge_alternates as merge_alternates
from ._assets import Requisites as Requisites
from ._assets import requisites as requisites
from ._exchange import Exchange as Exchange
from ._exchange import Recorder as Recorder
from ._fetcher import FollowPolicy as FollowPolicy
from ._fetcher import Response as Response
from ._gate import BLOCKED as BLOCKED
from ._gate import RobotsGate as RobotsGate
from ._pagejob import PageJob as PageJob
from ._pagejob import ParseFn as ParseFn
from ._pagejob import PoliteClient as PoliteClient
from ._pagejob import failed as failed
from ._redirects import RedirectTrail as RedirectTrail
from ._robots import RobotsRules as RobotsRules
from ._session import load_cookie_file as load_cookie_file
from ._sitemaps import MAX_SITEMAP_BYTES as MAX_SITEMAP_BYTES
from ._sitemaps import discover as discover
from ._sitemaps import sitemap_urls as sitemap_urls
from ._stack import FetchStack as FetchStack
