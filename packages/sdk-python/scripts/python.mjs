// Debian's Python: the SDK's dependencies are installed from apt (scripts/install.sh), into
// /usr/lib/python3/dist-packages, which another python3 on PATH (pyenv, venv) does not see.
export const python = process.env.SVC_PYTHON || '/usr/bin/python3';
