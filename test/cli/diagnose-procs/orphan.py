# Leaves a grandchild behind: the middle process exits, so the grandchild is re-parented (init or a subreaper).
import os, sys, time
r, w = os.pipe()
mid = os.fork()
if mid == 0:
    grand = os.fork()
    if grand == 0:
        os.close(r)
        os.write(w, f"{os.getpid()}\n".encode())
        os.close(w)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        time.sleep(120)
        os._exit(0)
    os._exit(0)
os.close(w)
os.waitpid(mid, 0)
print(os.read(r, 64).decode().strip(), flush=True)
