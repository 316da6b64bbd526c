from bundler.cli import run

if __name__ == "__main__":  # not when a spawned helper process imports it
    run()
