"""Per-host politeness slots: in-process, and shared through Redis."""

from ._local import Throttle as Throttle
from ._local import parse_retry_after as parse_retry_after
from ._redis import RedisThrottle as RedisThrottle
