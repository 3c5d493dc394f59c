# A parent that never reaps its exited child: the child stays a zombie.
import os, time
child = os.fork()
if child == 0:
    os._exit(0)
print(child, flush=True)
time.sleep(120)
