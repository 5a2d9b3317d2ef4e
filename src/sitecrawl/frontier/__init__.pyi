# The public names of sitecrawl.frontier, each once (its __init__.py serves them lazily).

from ._base import Frontier as Frontier
from ._base import FrontierStats as FrontierStats
from ._base import PageStore as PageStore
from ._memory import MemoryFrontier as MemoryFrontier
from ._redis import CrawlStatus as CrawlStatus
from ._redis import RedisFrontier as RedisFrontier
from ._redis_crawl import CrawlScript as CrawlScript
from ._redis_crawl import import_redis as import_redis
from ._redis_crawl import redact as redact
from ._redis_shards import RedisShards as RedisShards
from ._redis_shards import SharedFrontier as SharedFrontier
from ._redis_shards import shard_of as shard_of
from ._sqlite import SqliteFrontier as SqliteFrontier
from ._stored import decode as decode
from ._stored import encode as encode
from ._stored import given_rules as given_rules
from ._stored import joined as joined
from ._stored import origin_of as origin_of
from ._stored import take_or_refuse as take_or_refuse
