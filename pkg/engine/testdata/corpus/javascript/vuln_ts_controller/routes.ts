import { Router } from "express";
import * as accounts from "./controller";

export const router = Router();
router.get("/accounts/:id", accounts.show);
router.get("/accounts", accounts.count);
