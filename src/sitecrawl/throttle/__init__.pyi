# The public names of sitecrawl.throttle, each once (its __init__.py serves them lazily).

from ._local import Throttle as Throttle
from ._local import parse_retry_after as parse_retry_after
from ._redis import RedisThrottle as RedisThrottle
