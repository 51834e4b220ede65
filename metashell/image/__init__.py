"""The metadata image: replay KRaft metadata records into an in-memory picture of the cluster.

* ``model``   -- value objects (BrokerRegistration, Partition, Topic, Acl, ...) and Kafka's code tables;
* ``image``   -- ``MetadataImage`` and its areas (cluster, topics, configs, quotas, features, ...);
* ``replay``  -- ``Replayer``: one record at a time, with Kafka's semantics, faults as warnings;
* ``loader``  -- ``load_directory`` / ``load_file`` / ``ImageLoader`` (live batches) / time travel;
* ``live_feed`` -- live-mode session feeding an image from a controller quorum.
"""

from typing import TYPE_CHECKING

from metashell.lazy import lazy_exports

if TYPE_CHECKING:
    from metashell.image.image import MetadataImage
    from metashell.image.loader import ImageLoader, LoadResult, load_directory, load_file, rebuild_at
    from metashell.image.replay import Replayer, ReplayWarning

_EXPORTS = {
    "MetadataImage": "metashell.image.image",
    "ImageLoader": "metashell.image.loader",
    "LoadResult": "metashell.image.loader",
    "load_directory": "metashell.image.loader",
    "load_file": "metashell.image.loader",
    "rebuild_at": "metashell.image.loader",
    "Replayer": "metashell.image.replay",
    "ReplayWarning": "metashell.image.replay",
}
__getattr__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = [
    "ImageLoader",
    "LoadResult",
    "MetadataImage",
    "ReplayWarning",
    "Replayer",
    "load_directory",
    "load_file",
    "rebuild_at",
]
