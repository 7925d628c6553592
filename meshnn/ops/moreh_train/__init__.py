"""moreh's training ops (``ttnn.operations.moreh.*``): the optimizers (``adam``, ``adamw``,
``sgd``, ``clip_grad_norm``), the losses (``nll_loss`` and its backward forms), the softmax
family (``softmax``, ``softmin``, ``logsoftmax`` and their ``_backward`` forms) and the norms
(``group_norm``, ``layer_norm`` and their backward forms).  One module per kind; each declares its
ops in the registry as ``moreh.<name>``, which ``ttnn.operations.moreh.<name>`` answers."""
