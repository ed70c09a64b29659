"""The application: what a user runs from a shell.

``cli``
    the ``straggle-edu`` command, which dispatches to the subcommands.
``launch``
    ``straggle-edu lab``: JupyterLab on 127.0.0.1 with a token.
``site``
    ``straggle-edu site``: the notebooks as a static HTML site.
``classroom``
    ``straggle-edu student-copies``: the notebooks without solutions.

The application may import every room. Nothing imports the application.
"""
