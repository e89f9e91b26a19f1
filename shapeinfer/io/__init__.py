"""The protobuf and the file system: the wire layout of a model file (:mod:`.wire`), external
data (:mod:`.external`), the rules for the files a user names (:mod:`.userfiles`), message text
(:mod:`.modeltext`), reading a model and converting protobuf <-> facts (:mod:`.onnxio`), the
model forms the API takes (:mod:`.modelsource`) and the atomic write (:mod:`.writer`). Imports
only :mod:`shapeinfer.symbolic` and :mod:`shapeinfer.base`."""
