"""Spec -> code: everything ``pi-context generate`` writes, and the TypeScript build.

* ``python``      a spec's Python package: types, reducer, ``__init__``, and the files of
                  ``wire``/``wire_step`` and ``machine`` (the table of the ``transitions`` machine)
* ``wire``, ``wire_step``   its ``wire.py``: checked and fast JSON conversion, ``step_wire``
* ``emit``, ``naming``      emission pieces and names shared by the generators
* ``typescript``  the TypeScript binding's generated modules (``bindings-ts/generated``);
                  ``typescript_reducer`` their event functions, ``typescript_input`` their
                  input checks, ``typescript_names`` the names and literals these share,
                  ``typescript_package`` the package.json
* ``docs``        a spec's reference page (``docs/<family>/<version>.md``)
* ``outputs``     every generated file by path; ``--check`` compares instead of writing
* ``fresh``       code for a spec with no committed package, generated and imported for this
                  process (``reset_control``: the committed handle, else a fresh one)
* ``tsbuild``     the pinned npm toolchain and type-check of ``bindings-ts``
                  (``python -m pi_context.codegen.tsbuild``)
* ``tspackage``   the package as a user gets it: packed, installed into an empty project, the
                  docs example run (``python -m pi_context.codegen.tspackage``)
"""
