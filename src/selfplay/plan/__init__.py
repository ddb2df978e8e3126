"""Planning a paper config before anything is submitted: how each served model is spread
over GPUs (:mod:`.serving`), whether each GPU job fits the GPU it asks for
(:mod:`.gpu_memory`), and what the whole run costs against the paper's budget
(:mod:`.estimate`, the ``selfplay plan`` command in :mod:`.cli`)."""
