"""A TCP proxy that delays every byte by a fixed time each way, as
`tc qdisc add dev lo root netem delay MS` does where the kernel has netem:
data is queued with its due time, so a transfer keeps its throughput and
only each round trip costs 2 x MS. For bench_remote (TDSTUDIO_BENCH_DELAY_MS).

usage: delay_proxy.py TARGET_PORT DELAY_MS  (prints the port it listens on)
"""
import asyncio
import sys

TARGET = int(sys.argv[1])
DELAY = int(sys.argv[2]) / 1000.0


async def pipe(reader, writer):
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    async def later():
        while True:
            due, data = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if not data:
                break
            writer.write(data)
            await writer.drain()
        writer.close()

    sender = asyncio.ensure_future(later())
    try:
        while True:
            data = await reader.read(1 << 16)
            await queue.put((loop.time() + DELAY, data))
            if not data:
                break
    except ConnectionError:
        await queue.put((loop.time(), b""))
    await sender


async def handle(client_reader, client_writer):
    try:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", TARGET)
    except OSError:
        client_writer.close()
        return
    await asyncio.gather(pipe(client_reader, server_writer), pipe(server_reader, client_writer),
                         return_exceptions=True)


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
