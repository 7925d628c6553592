"""The backward ops of ttnn (``ttnn.exp_bw``, ``ttnn.mul_bw``, ``ttnn.where_bw``...): each returns the
list of gradients ttnn returns, one per input that has one, computed from the incoming gradient
``grad_tensor`` as the derivative in float32 and rounded once into the output dtype.

Every op is one entry of a table (:class:`~meshnn.ops.backward.defs.GradDef`): its derivative
functions, its ttnn overloads and its golden function (torch autograd, as ttnn attaches it).

- :mod:`~meshnn.ops.backward.binding`: overloaded public functions (ttnn's pybind overloads);
- :mod:`~meshnn.ops.backward.run`: the launches of a backward op (one element-wise program per
  gradient, into the preallocated ``input_grad`` / ``other_grad`` when given);
- :mod:`~meshnn.ops.backward.defs`: :class:`GradDef` and the forms of ttnn's bindings;
- :mod:`~meshnn.ops.backward.goldens`: golden functions by torch autograd;
- the tables: :mod:`~meshnn.ops.backward.unary_math`, :mod:`~meshnn.ops.backward.unary_activations`,
  :mod:`~meshnn.ops.backward.binary`, :mod:`~meshnn.ops.backward.ternary`,
  :mod:`~meshnn.ops.backward.shaped` (gradients of another shape than the incoming one).
"""
